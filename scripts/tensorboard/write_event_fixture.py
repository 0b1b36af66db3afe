"""Writes a small event file with TensorBoard's own writer (run by make-event-fixture.sh).

Contents (what test/fixtures/tensorboard/fixture.test.ts asserts):
  - the file_version event the writer puts first ("brain.Event:2");
  - steps 1..3, tag "critic/score/mean": v2 scalars, summary_v2.scalar_pb (tensor, dtype float,
    plugin "scalars") = what tf.summary.scalar writes; values 0.25, 0.5, 0.75;
  - steps 1..3, tag "response_length/clip_ratio": legacy Summary.Value.simple_value = what
    torch.utils.tensorboard's SummaryWriter.add_scalar writes; values 0.125, 0.0, 1.0;
  - step 2, tag "response_length/mean": a v2 scalar in float64 (tensor dtype DT_DOUBLE,
    double_val) with the scalars plugin metadata, value 123.5.
Wall times are fixed (1700000000 + step) so the expected rows are exact.
"""
import sys

import numpy as np

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.plugins.scalar import summary_v2
from tensorboard.summary.writer.event_file_writer import EventFileWriter
from tensorboard.util import tensor_util

logdir = sys.argv[1]
writer = EventFileWriter(logdir, filename_suffix="")
for step, (score, clip) in enumerate([(0.25, 0.125), (0.5, 0.0), (0.75, 1.0)], start=1):
    wall = 1700000000.0 + step
    writer.add_event(
        event_pb2.Event(wall_time=wall, step=step, summary=summary_v2.scalar_pb("critic/score/mean", score))
    )
    legacy = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="response_length/clip_ratio", simple_value=clip)])
    writer.add_event(event_pb2.Event(wall_time=wall, step=step, summary=legacy))
    if step == 2:
        double = summary_pb2.Summary(
            value=[
                summary_pb2.Summary.Value(
                    tag="response_length/mean",
                    tensor=tensor_util.make_tensor_proto(np.float64(123.5)),
                    metadata=summary_v2.metadata.create_summary_metadata(display_name="response_length/mean", description=""),
                )
            ]
        )
        writer.add_event(event_pb2.Event(wall_time=wall, step=step, summary=double))
writer.close()
