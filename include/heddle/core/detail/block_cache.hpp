// Per-worker caches of fixed-size blocks for task records, so that the steady-state spawn path
// never calls malloc. Every block comes from aligned operator new, so any thread may free any
// block: a worker keeps it in its cache, any other thread (or a full cache) returns it to the heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace heddle::detail {

inline constexpr std::size_t block_align = 64;  // one cache line: records never share a line
inline constexpr std::size_t num_size_classes = 4;
inline constexpr std::size_t max_cached_blocks = 4096;  // per class and worker

constexpr std::size_t size_class_of(std::size_t bytes) noexcept {
  return bytes <= 64 ? 0 : bytes <= 128 ? 1 : bytes <= 256 ? 2 : bytes <= 512 ? 3 : num_size_classes;
}
constexpr std::size_t class_bytes(std::size_t cls) noexcept { return std::size_t{64} << cls; }

class block_cache {
 public:
  block_cache() = default;
  block_cache(const block_cache&) = delete;
  block_cache& operator=(const block_cache&) = delete;
  ~block_cache() {
    for (std::size_t c = 0; c < num_size_classes; ++c)
      while (free_block* b = head_[c]) {
        head_[c] = b->next;
        ::operator delete(b, std::align_val_t{block_align});
      }
  }

  void* allocate(std::size_t cls) {
    if (free_block* b = head_[cls]) [[likely]] {
      head_[cls] = b->next;
      --count_[cls];
      return b;
    }
    return ::operator new(class_bytes(cls), std::align_val_t{block_align});
  }

  void deallocate(void* p, std::size_t cls) noexcept {
    if (count_[cls] < max_cached_blocks) [[likely]] {
      head_[cls] = new (p) free_block{head_[cls]};
      ++count_[cls];
      return;
    }
    ::operator delete(p, std::align_val_t{block_align});
  }

 private:
  struct free_block {
    free_block* next;
  };
  free_block* head_[num_size_classes] = {};
  std::uint32_t count_[num_size_classes] = {};
};

}  // namespace heddle::detail
