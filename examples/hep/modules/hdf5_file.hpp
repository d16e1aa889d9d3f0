// SPDX-License-Identifier: Apache-2.0
// A thin owner of an HDF5 file for the job's output (HDF5's C API, as Debian's libhdf5-dev ships
// it: built without its thread-safe option, so one thread at a time; hep::HDF5Output calls it from
// transitions only). Tables are one-dimensional datasets of a compound type, chunked and extended
// as rows are appended. Every failure is a std::runtime_error naming the file and what failed.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../core/histogram.hpp"
#include "../core/output_rows.hpp"

namespace hep {

// An HDF5 identifier closed by its own close function.
class h5_id {
 public:
  h5_id() = default;
  h5_id(hid_t id, herr_t (*close)(hid_t)) noexcept : id_(id), close_(close) {}
  h5_id(h5_id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  h5_id& operator=(h5_id&& o) noexcept;
  ~h5_id();
  hid_t get() const noexcept { return id_; }
  hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }
  explicit operator bool() const noexcept { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

class h5_output_file {
 public:
  // Creates (truncates) `path`. Throws naming it when HDF5 cannot.
  explicit h5_output_file(std::string path);
  h5_output_file(const h5_output_file&) = delete;
  h5_output_file& operator=(const h5_output_file&) = delete;

  // Appends rows to /events, /jets and /fat_jets, in the order given.
  void append(const block_rows& rows);
  // /histograms/<name> (the job's counts) and /lumi_histograms/<name> (a row per block), each with
  // the attributes low, high, title, xlabel; /lumis (run, lumi, events).
  void write_histograms(const std::vector<lumi_summary>& lumis, const std::vector<histogram>& total);
  // A scalar attribute of the file.
  void attribute(const char* name, double value);
  void attribute(const char* name, std::uint64_t value);
  void attribute(const char* name, const std::string& value);
  // Flushes and closes; throws if HDF5 reports an error.
  void close();

  const std::string& path() const noexcept { return path_; }

 private:
  struct table {
    h5_id dataset, memory_type;
    std::uint64_t rows = 0;
  };
  table make_table(const char* name, h5_id memory_type);
  void append(table& t, const void* rows, std::size_t n);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  h5_id file_;
  table events_, jets_, fat_jets_;
};

}  // namespace hep
