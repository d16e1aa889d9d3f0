// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "numeric_options.hpp"

namespace heddle::run_tool {

int parse(int argc, char** argv, options& out) {
  CLI::App app{"heddle-run: starts N processes of a program as the nodes of a heddle active-message session"};
  app.add_option("-n,--nodes", out.nodes, "number of nodes (processes)")
      ->required()
      ->check(heddle::tool::whole_number(1, 1024));
  app.add_option("--backend", out.backend, "shm (one host, shared memory) or tcp")
      ->check(CLI::IsMember({"shm", "tcp"}));
  app.add_option("--bind", out.bind, "tcp: the IPv4 address the nodes listen on (default 127.0.0.1)");
  app.add_option("--timeout", out.timeout, "kill every node after this many seconds (0: never)")
      ->check(heddle::tool::real_number(true));
  app.add_option("--trace", out.trace_file,
                 "every node records a trace; merged into FILE at the end (heddle-trace merge)");
  app.prefix_command();  // the first argument that is not heddle-run's starts the program's command line
  app.footer("The program and its arguments follow heddle-run's options.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  out.command = app.remaining();
  if (out.command.empty()) {
    std::fprintf(stderr, "heddle-run: no program given (heddle-run -n N [--backend shm|tcp] program [args...])\n");
    return 2;
  }
  return -1;
}

}  // namespace heddle::run_tool
