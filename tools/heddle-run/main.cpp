// SPDX-License-Identifier: Apache-2.0
// heddle-run: starts N processes of one program as the nodes of an active-message session.
//   heddle-run -n N [--backend shm|tcp] [--bind ADDR] [--timeout SECONDS] program [args...]
// Every node gets HEDDLE_BACKEND, HEDDLE_NODE, HEDDLE_NODES and HEDDLE_SESSION; on tcp also
// HEDDLE_PEERS (every node's address), HEDDLE_LISTEN_FD (its listening socket, made here so no
// port can be taken in between) and HEDDLE_SECRET. Node 0 runs the program's main work; the others
// serve until node 0's session ends (heddle::offload::session::serve).
//
// Exit status: 0 when every node exits 0; else node 0's status if it failed, or the first failed
// node's (128 + signal for a signal), with one line on stderr per failed node. 2 for a bad command
// line. SIGINT and SIGTERM are passed on to the nodes; --timeout kills them all (status 124).
// Shared-memory objects a crashed node left (/dev/shm/heddle.SESSION.*) are removed at the end.
//
// --trace FILE: every node records a trace (HEDDLE_TRACE=FILE.node<K>.json), and when they have
// exited heddle-run merges them into FILE with `heddle-trace merge` (beside heddle-run, else in
// PATH, else the installed one; its report on stderr): one process track per node, each message a
// flow from its sender to its receiver. If the merge cannot run, the nodes' files stay and
// heddle-run says so (status 1 if the run succeeded).
//
// Parsing the command line: options.cpp; running the nodes: run.cpp.
#include "options.hpp"
#include "run.hpp"

int main(int argc, char** argv) {
  heddle::run_tool::options o;
  if (const int status = heddle::run_tool::parse(argc, argv, o); status >= 0) return status;
  return heddle::run_tool::run(o);
}
