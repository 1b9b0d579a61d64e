;; TierGate as a schedperf WebAssembly guest (ABI version 1, docs/extenders.md "WebAssembly
;; guests"). Compiled from this text by the runtime when the plugin loads; no binary is kept.
;;
;; Filter: a node whose label value is "excluded" is rejected. Score: "gold" 100,
;; "silver" 50, anything else 0.
(module
  (memory (export "memory") 1)
  ;; constants below 1024; the host's scratch area starts at 1024
  (data (i32.const 0) "excluded")
  (data (i32.const 16) "gold")
  (data (i32.const 32) "silver")
  (data (i32.const 64) "node(s) excluded by the tier rule")

  (func (export "schedperf_abi_version") (result i32) (i32.const 1))
  (func (export "reason_ptr") (result i32) (i32.const 64))
  (func (export "reason_len") (result i32) (i32.const 33))

  ;; scratch(size): where the host may write size bytes (memory grown to fit)
  (func (export "scratch") (param $size i32) (result i32)
    (local $need i32)
    (local $have i32)
    (local.set $need (i32.add (i32.const 1024) (local.get $size)))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $need) (local.get $have))
      (then
        (drop (memory.grow
          (i32.div_u (i32.add (i32.sub (local.get $need) (local.get $have)) (i32.const 65535))
                     (i32.const 65536))))))
    (i32.const 1024))

  ;; the n bytes at p equal the m bytes at q
  (func $eq (param $p i32) (param $n i32) (param $q i32) (param $m i32) (result i32)
    (local $i i32)
    (if (i32.ne (local.get $n) (local.get $m)) (then (return (i32.const 0))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (if (i32.ne (i32.load8_u (i32.add (local.get $p) (local.get $i)))
                    (i32.load8_u (i32.add (local.get $q) (local.get $i))))
          (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 1))

  ;; records: n x 16 bytes {value_ptr i32, value_len i32 (-1: no label), pods i32,
  ;; allocatable_pods i32}; out: n bytes, 1 passes, 0 rejected
  (func (export "filter") (param $rec i32) (param $n i32) (param $out i32)
    (local $i i32)
    (local $r i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $r (i32.add (local.get $rec) (i32.shl (local.get $i) (i32.const 4))))
        (i32.store8 (i32.add (local.get $out) (local.get $i))
          (i32.eqz (call $eq (i32.load (local.get $r)) (i32.load offset=4 (local.get $r))
                             (i32.const 0) (i32.const 8))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  ;; out: n little-endian i32 scores in 0..100
  (func (export "score") (param $rec i32) (param $n i32) (param $out i32)
    (local $i i32)
    (local $r i32)
    (local $s i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $r (i32.add (local.get $rec) (i32.shl (local.get $i) (i32.const 4))))
        (local.set $s (i32.const 0))
        (if (call $eq (i32.load (local.get $r)) (i32.load offset=4 (local.get $r))
                      (i32.const 16) (i32.const 4))
          (then (local.set $s (i32.const 100))))
        (if (call $eq (i32.load (local.get $r)) (i32.load offset=4 (local.get $r))
                      (i32.const 32) (i32.const 6))
          (then (local.set $s (i32.const 50))))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
                   (local.get $s))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))
)
