"""WebAssembly guest plugins (wasmtime): a plugin whose Filter and Score run in a guest module,
its ABI (``guest.py``) and the shipped TierGate guest (``guests/tier_gate.wat``)."""
