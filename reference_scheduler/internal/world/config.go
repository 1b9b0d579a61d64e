package world

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"

	"github.com/schedperf/reference_scheduler/internal/protocol"
)

// defaultConfigText is the configuration used when none is given: every field defaulted.
const defaultConfigText = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

var (
	quotedField = regexp.MustCompile(`(?:unknown|duplicate) field "([^"]+)"`)
	goField     = regexp.MustCompile(`Go struct field [A-Za-z0-9_]+\.([A-Za-z0-9_.\[\]]+) of type`)
)

// DecodeConfig reads a KubeSchedulerConfiguration (YAML or JSON) as kube-scheduler reads its
// --config file: strict decoding into the versioned type, defaulting, conversion to the
// internal type, then validation. An empty text means the defaults.
func DecodeConfig(text string) (*config.KubeSchedulerConfiguration, *protocol.Error) {
	if strings.TrimSpace(text) == "" {
		text = defaultConfigText
	}
	obj, gvk, err := scheme.Codecs.UniversalDecoder().Decode([]byte(text), nil, nil)
	if err != nil {
		return nil, decodeError(err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, &protocol.Error{Kind: protocol.ErrInvalidConfig, Field: "kind",
			Message: fmt.Sprintf("expected a KubeSchedulerConfiguration, got %s", gvk)}
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if agg := validation.ValidateKubeSchedulerConfiguration(cfg); agg != nil {
		return nil, validationError(agg.Errors())
	}
	if len(cfg.Extenders) > 0 {
		return nil, &protocol.Error{Kind: protocol.ErrUnsupported, Field: "extenders",
			Message: "extenders: scheduler extenders are not supported by schedperf-reference"}
	}
	return cfg, nil
}

func decodeError(err error) *protocol.Error {
	out := &protocol.Error{Kind: protocol.ErrInvalidConfig, Message: err.Error()}
	var errs []error
	if strict, ok := runtime.AsStrictDecodingError(err); ok {
		errs = strict.Errors()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		msg := e.Error()
		path := ""
		if m := quotedField.FindStringSubmatch(msg); m != nil {
			path = m[1]
		} else if m := goField.FindStringSubmatch(msg); m != nil {
			path = m[1]
		}
		if path != "" {
			out.Fields = append(out.Fields, protocol.FieldError{Field: path, Message: msg})
		}
	}
	if len(out.Fields) > 0 {
		out.Field = out.Fields[0].Field
	}
	return out
}

func validationError(errs []error) *protocol.Error {
	out := &protocol.Error{Kind: protocol.ErrInvalidConfig}
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, e.Error())
		if fe, ok := e.(*field.Error); ok {
			out.Fields = append(out.Fields, protocol.FieldError{Field: fe.Field, Message: fe.ErrorBody()})
		}
	}
	out.Message = strings.Join(msgs, "; ")
	if len(out.Fields) > 0 {
		out.Field = out.Fields[0].Field
	}
	return out
}

// setFeatureGates sets kube's feature gates once per process: the scheduler library reads
// them when profiles are built, so they cannot change afterwards.
func (w *World) setFeatureGates(gates map[string]bool) *protocol.Error {
	if len(gates) == 0 {
		return nil
	}
	if w.gates != nil {
		for k, v := range gates {
			if old, ok := w.gates[k]; !ok || old != v {
				return protocol.NewError(protocol.ErrConflict,
					"featureGates: feature gates are set once per process; start a new process to change them")
			}
		}
		return nil
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return &protocol.Error{Kind: protocol.ErrInvalidConfig, Field: "featureGates", Message: "featureGates: " + err.Error()}
	}
	w.gates = gates
	return nil
}
