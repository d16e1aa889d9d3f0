// SPDX-License-Identifier: Apache-2.0
// A POSIX shared-memory object mapped into this process (/dev/shm/NAME): created by its owner,
// opened by the others, unmapped when the segment object goes, unlinked by whoever owns the name.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

namespace heddle::am_detail {

class shm_segment {
 public:
  shm_segment() = default;
  shm_segment(shm_segment&& o) noexcept
      : name_(std::move(o.name_)), data_(std::exchange(o.data_, nullptr)), bytes_(o.bytes_), owner_(o.owner_) {}
  shm_segment& operator=(shm_segment&& o) noexcept {
    if (this != &o) {
      reset();
      name_ = std::move(o.name_);
      data_ = std::exchange(o.data_, nullptr);
      bytes_ = o.bytes_;
      owner_ = o.owner_;
    }
    return *this;
  }
  ~shm_segment() { reset(); }

  // A new object of `bytes` zero bytes; EEXIST if the name is taken.
  static shm_segment create(const std::string& name, std::size_t bytes) {
    const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "shm_open(" + name + ", O_CREAT)");
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      const int e = errno;
      ::close(fd);
      ::shm_unlink(name.c_str());
      throw std::system_error(e, std::generic_category(), "ftruncate(" + name + ", " + std::to_string(bytes) + ")");
    }
    shm_segment s = map(fd, name, bytes);
    s.owner_ = true;
    return s;
  }

  // An existing object, whole; ENOENT (errno kept) if there is none.
  static shm_segment open(const std::string& name) {
    const int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "shm_open(" + name + ")");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int e = errno;
      ::close(fd);
      throw std::system_error(e, std::generic_category(), "fstat(" + name + ")");
    }
    return map(fd, name, static_cast<std::size_t>(st.st_size));
  }

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  // This object no longer unlinks the name when it goes (a transfer segment, which its reader unlinks).
  void keep_name() noexcept { owner_ = false; }
  // The name goes now (the mapping stays): for objects whose reader unlinks them.
  void unlink() noexcept {
    if (!name_.empty()) ::shm_unlink(name_.c_str());
    owner_ = false;
  }

 private:
  static shm_segment map(int fd, const std::string& name, std::size_t bytes) {
    void* p = bytes ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : nullptr;
    const int e = errno;
    ::close(fd);
    if (p == MAP_FAILED) throw std::system_error(e, std::generic_category(), "mmap(" + name + ")");
    shm_segment s;
    s.name_ = name;
    s.data_ = static_cast<std::byte*>(p);
    s.bytes_ = bytes;
    return s;
  }
  void reset() noexcept {
    if (data_) ::munmap(data_, bytes_);
    data_ = nullptr;
    if (owner_) ::shm_unlink(name_.c_str());
    owner_ = false;
  }

  std::string name_;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool owner_ = false;
};

}  // namespace heddle::am_detail
