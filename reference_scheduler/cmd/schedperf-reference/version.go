package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/schedperf/reference_scheduler/internal/protocol"
)

var binaryHash = sync.OnceValues(func() (string, error) {
	path, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
})

// kubernetesVersion is the version of k8s.io/kubernetes this binary was built with.
func kubernetesVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == "k8s.io/kubernetes" {
			return dep.Version
		}
	}
	return "unknown"
}

func versionInfo() (*protocol.Hello, *protocol.Error) {
	hash, err := binaryHash()
	if err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, "hashing the binary: "+err.Error())
	}
	return &protocol.Hello{Protocol: protocol.Version, Kubernetes: kubernetesVersion(), Go: runtime.Version(), BinarySHA256: hash}, nil
}
