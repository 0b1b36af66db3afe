#!/bin/sh
# Writes test/fixtures/tensorboard/events.out.tfevents.fixture with TensorBoard's OWN Python writer
# (tensorboard/summary/writer/event_file_writer.py + record_writer.py and the scalar plugin's
# summary_v2.scalar_pb), so that our reader (src/audit/metricsLog/tfevents.ts) is tested against
# bytes it did not write itself. TensorBoard's code is NOT committed here; it is taken from a
# checkout at run time.
#
# Needs: a git checkout of github.com/tensorflow/tensorboard (argument 1; the committed fixture was
# made at commit 70b76c922822dcccc3e8d7e5dd89860948690357), Debian's protobuf-compiler (protoc 3.21)
# and python3-protobuf (4.21) and python3-numpy. No TensorFlow: TensorBoard falls back to its
# tensorflow_stub.
#
#   sh scripts/tensorboard/make-event-fixture.sh /path/to/tensorboard-git-dir [out-file]
set -eu
repo=$1
out=${2:-test/fixtures/tensorboard/events.out.tfevents.fixture}
commit=70b76c922822dcccc3e8d7e5dd89860948690357
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Only the parts of the python package the writer imports (git archive works on a bare mirror too).
git --git-dir="$repo" archive "$commit" tensorboard/__init__.py tensorboard/lazy.py \
  tensorboard/version.py tensorboard/compat tensorboard/summary \
  tensorboard/plugins/__init__.py tensorboard/plugins/scalar tensorboard/util | tar -x -C "$tmp"
(cd "$tmp" && protoc --python_out=. tensorboard/compat/proto/*.proto tensorboard/plugins/scalar/*.proto)
mkdir -p "$(dirname "$out")"
PYTHONPATH="$tmp" /usr/bin/python3 "$(dirname "$0")/write_event_fixture.py" "$tmp/logdir"
cp "$tmp"/logdir/events.out.tfevents.* "$out"
echo "wrote $out ($(wc -c < "$out") bytes)"
