# SPDX-License-Identifier: Apache-2.0
"""heddle-trace: reads heddle's trace files (Chrome trace-event JSON, docs/trace.md): summary,
plot and validate. The command line is cli.main; each subcommand has its own module."""
