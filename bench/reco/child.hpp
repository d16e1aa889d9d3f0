// Starting heddle-reco-job processes and measuring them from outside: wall time as the parent sees
// it (process start and library loading included), the process's peak RSS (wait4), and the JSON
// line it prints.
#pragma once

#include <string>
#include <vector>

namespace heddle::bench::reco {

struct child_result {
  double wall_s = 0;           // from the start of the first process to the end of the last
  double peak_rss_bytes = 0;   // summed over the processes
  std::vector<std::string> checksums;  // each process's, in start order
};

// Starts one process per argument list (argv[0] is the program), all at once, and waits for all.
// Throws std::runtime_error naming the command when one fails or prints no checksum.
child_result run_children(const std::vector<std::vector<std::string>>& commands);

}  // namespace heddle::bench::reco
