#!/usr/bin/env bash
# Regenerates the binary seed corpora from their text sources in seeds/ (protoc --encode), so that
# they stay readable and follow the .proto files:
#   corpus/validate/NAME      seeds/validate/NAME.txtpb as a SubmitRequest
#   corpus/framing/NAME       seeds/framing/NAME.txtpb as one frame (4-byte little-endian length, bytes)
#                             after the target's direction byte (1: RunnerRequest; 0: RunnerResponse,
#                             for files named *.resp.txtpb), plus hand-made edge frames.
# Run from anywhere; needs protoc and python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
proto=$(cd "$here/../../proto" && pwd)

encode() {  # PACKAGE.MESSAGE FILE.proto (under proto/kbench/) < text > binary
  protoc --encode="$1" -I "$proto" "$proto/kbench/$2"
}

for f in "$here"/seeds/validate/*.txtpb; do
  encode kbench.v1.SubmitRequest v1/coordinator.proto <"$f" >"$here/corpus/validate/$(basename "$f" .txtpb)"
done

frame() {  # DIRECTION_BYTE < body > direction + frame
  python3 -c 'import sys,struct; b=sys.stdin.buffer.read(); sys.stdout.buffer.write(bytes([int(sys.argv[1])]) + struct.pack("<I", len(b)) + b)' "$1"
}
out=$here/corpus/framing
for f in "$here"/seeds/framing/*.txtpb; do
  name=$(basename "$f" .txtpb)
  if [[ $name == *.resp ]]; then
    encode kbench.runner.RunnerResponse runner/runner.proto <"$f" | frame 0 >"$out/${name%.resp}"
  else
    encode kbench.runner.RunnerRequest runner/runner.proto <"$f" | frame 1 >"$out/$name"
  fi
done
# Two frames back to back; a frame cut short; a header alone; a length over the 256 MiB limit; an
# empty message; three bytes of a header; a body that is not a message.
cat "$out/measure" <(tail -c +2 "$out/describe") >"$out/two_frames"
head -c 20 "$out/measure" >"$out/cut_short"
python3 - "$out" <<'PY'
import struct, sys
out = sys.argv[1]
files = {
    "header_alone": b"\x00" + struct.pack("<I", 1 << 20),
    "over_limit": b"\x01" + struct.pack("<I", (256 << 20) + 1) + b"x",
    "empty_message": b"\x00" + struct.pack("<I", 0),
    "partial_header": b"\x01\x05\x00\x00",
    "not_a_message": b"\x00" + struct.pack("<I", 4) + b"\xff\xff\xff\xff",
}
for name, data in files.items():
    open(f"{out}/{name}", "wb").write(data)
PY
