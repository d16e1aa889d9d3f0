// SPDX-License-Identifier: Apache-2.0
#include "hdf5_file.hpp"

#include <cstddef>
#include <stdexcept>

namespace hep {

h5_id& h5_id::operator=(h5_id&& o) noexcept {
  if (this != &o) {
    if (id_ >= 0 && close_) close_(id_);
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

h5_id::~h5_id() {
  if (id_ >= 0 && close_) close_(id_);
}

namespace {

// HDF5 prints its error stack to stderr by default; the module reports errors itself.
void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

h5_id compound(std::size_t size) { return {H5Tcreate(H5T_COMPOUND, size), H5Tclose}; }

#define HEP_FIELD(type, row, field, h5type) H5Tinsert(type.get(), #field, offsetof(row, field), h5type)

h5_id event_type() {
  h5_id t = compound(sizeof(event_row));
  HEP_FIELD(t, event_row, run, H5T_NATIVE_UINT32);
  HEP_FIELD(t, event_row, lumi, H5T_NATIVE_UINT32);
  HEP_FIELD(t, event_row, event, H5T_NATIVE_UINT64);
  HEP_FIELD(t, event_row, n_pileup, H5T_NATIVE_UINT32);
  HEP_FIELD(t, event_row, n_candidates, H5T_NATIVE_UINT32);
  HEP_FIELD(t, event_row, n_jets, H5T_NATIVE_UINT32);
  HEP_FIELD(t, event_row, n_fat_jets, H5T_NATIVE_UINT32);
  HEP_FIELD(t, event_row, rho, H5T_NATIVE_DOUBLE);
  HEP_FIELD(t, event_row, met, H5T_NATIVE_DOUBLE);
  HEP_FIELD(t, event_row, met_phi, H5T_NATIVE_DOUBLE);
  HEP_FIELD(t, event_row, sum_et, H5T_NATIVE_DOUBLE);
  HEP_FIELD(t, event_row, dijet, H5T_NATIVE_UINT8);
  HEP_FIELD(t, event_row, boosted, H5T_NATIVE_UINT8);
  HEP_FIELD(t, event_row, first_jet, H5T_NATIVE_UINT64);
  HEP_FIELD(t, event_row, first_fat_jet, H5T_NATIVE_UINT64);
  return t;
}

h5_id jet_type() {
  h5_id t = compound(sizeof(jet_row));
  HEP_FIELD(t, jet_row, event, H5T_NATIVE_UINT64);
  // Formatted by hand: a table, one row a line.
  // clang-format off
  for (auto [name, offset] : {std::pair{"px", offsetof(jet_row, px)}, {"py", offsetof(jet_row, py)}, {"pz", offsetof(jet_row, pz)},
                              {"e", offsetof(jet_row, e)}, {"pt", offsetof(jet_row, pt)}, {"eta", offsetof(jet_row, eta)},
                              {"phi", offsetof(jet_row, phi)}, {"area", offsetof(jet_row, area)},
                              {"raw_pt", offsetof(jet_row, raw_pt)}, {"jec", offsetof(jet_row, jec)}})
    // clang-format on
    H5Tinsert(t.get(), name, offset, H5T_NATIVE_DOUBLE);
  return t;
}

h5_id fat_jet_type() {
  h5_id t = compound(sizeof(fat_jet_row));
  HEP_FIELD(t, fat_jet_row, event, H5T_NATIVE_UINT64);
  for (auto [name, offset] : {std::pair{"px", offsetof(fat_jet_row, px)},
                              {"py", offsetof(fat_jet_row, py)},
                              {"pz", offsetof(fat_jet_row, pz)},
                              {"e", offsetof(fat_jet_row, e)},
                              {"pt", offsetof(fat_jet_row, pt)},
                              {"eta", offsetof(fat_jet_row, eta)},
                              {"phi", offsetof(fat_jet_row, phi)},
                              {"mass", offsetof(fat_jet_row, mass)},
                              {"groomed_mass", offsetof(fat_jet_row, groomed_mass)}})
    H5Tinsert(t.get(), name, offset, H5T_NATIVE_DOUBLE);
  return t;
}

struct lumi_row {
  std::uint32_t run, lumi;
  std::uint64_t events;
};

h5_id lumi_type() {
  h5_id t = compound(sizeof(lumi_row));
  HEP_FIELD(t, lumi_row, run, H5T_NATIVE_UINT32);
  HEP_FIELD(t, lumi_row, lumi, H5T_NATIVE_UINT32);
  HEP_FIELD(t, lumi_row, events, H5T_NATIVE_UINT64);
  return t;
}

#undef HEP_FIELD

}  // namespace

h5_output_file::h5_output_file(std::string path) : path_(std::move(path)) {
  silence_hdf5();
  file_ = h5_id(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file_) fail("cannot create the file (is its folder there and writable?)");
  events_ = make_table("events", event_type());
  jets_ = make_table("jets", jet_type());
  fat_jets_ = make_table("fat_jets", fat_jet_type());
}

void h5_output_file::fail(const std::string& what) const { throw std::runtime_error(path_ + ": HDF5: " + what); }

h5_output_file::table h5_output_file::make_table(const char* name, h5_id memory_type) {
  if (!memory_type) fail(std::string("cannot make the row type of /") + name);
  // The file's type is the rows' packed: no padding bytes on disk.
  h5_id file_type(H5Tcopy(memory_type.get()), H5Tclose);
  if (!file_type || H5Tpack(file_type.get()) < 0) fail(std::string("cannot pack the row type of /") + name);
  const hsize_t dims[1] = {0}, max[1] = {H5S_UNLIMITED}, chunk[1] = {4096};
  h5_id space(H5Screate_simple(1, dims, max), H5Sclose);
  h5_id create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!space || !create || H5Pset_chunk(create.get(), 1, chunk) < 0) fail(std::string("cannot lay out /") + name);
  table t;
  t.dataset = h5_id(H5Dcreate2(file_.get(), name, file_type.get(), space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT),
                    H5Dclose);
  if (!t.dataset) fail(std::string("cannot create /") + name);
  t.memory_type = std::move(memory_type);
  return t;
}

void h5_output_file::append(table& t, const void* rows, std::size_t n) {
  if (n == 0) return;
  const hsize_t start[1] = {t.rows}, count[1] = {n}, size[1] = {t.rows + n};
  if (H5Dset_extent(t.dataset.get(), size) < 0) fail("cannot extend a table");
  h5_id file_space(H5Dget_space(t.dataset.get()), H5Sclose);
  h5_id memory_space(H5Screate_simple(1, count, nullptr), H5Sclose);
  if (!file_space || !memory_space ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
      H5Dwrite(t.dataset.get(), t.memory_type.get(), memory_space.get(), file_space.get(), H5P_DEFAULT, rows) < 0)
    fail("cannot write " + std::to_string(n) + " rows (disk full?)");
  t.rows += n;
}

void h5_output_file::append(const block_rows& rows) {
  std::vector<event_row> events;
  std::vector<jet_row> jets;
  std::vector<fat_jet_row> fat_jets;
  events.reserve(rows.events.size());
  for (const selected_event& e : rows.events) {
    events.push_back(e.row);
    jets.insert(jets.end(), e.jets.begin(), e.jets.end());
    fat_jets.insert(fat_jets.end(), e.fat_jets.begin(), e.fat_jets.end());
  }
  append(events_, events.data(), events.size());
  append(jets_, jets.data(), jets.size());
  append(fat_jets_, fat_jets.data(), fat_jets.size());
}

namespace {

void set_attribute(hid_t on, const char* name, hid_t type, const void* value, const std::string& file) {
  h5_id space(H5Screate(H5S_SCALAR), H5Sclose);
  h5_id attr(H5Acreate2(on, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr || H5Awrite(attr.get(), type, value) < 0)
    throw std::runtime_error(file + ": HDF5: cannot write attribute '" + name + "'");
}

void set_string_attribute(hid_t on, const char* name, const std::string& value, const std::string& file) {
  h5_id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const char* text = value.c_str();
  set_attribute(on, name, type.get(), &text, file);
}

void describe(hid_t dataset, const histogram& h, const std::string& file) {
  set_attribute(dataset, "low", H5T_NATIVE_DOUBLE, &h.x.low, file);
  set_attribute(dataset, "high", H5T_NATIVE_DOUBLE, &h.x.high, file);
  set_string_attribute(dataset, "title", h.title, file);
  set_string_attribute(dataset, "xlabel", h.xlabel, file);
}

}  // namespace

void h5_output_file::write_histograms(const std::vector<lumi_summary>& lumis, const std::vector<histogram>& total) {
  h5_id group(H5Gcreate2(file_.get(), "histograms", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  h5_id per_lumi(H5Gcreate2(file_.get(), "lumi_histograms", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!group || !per_lumi) fail("cannot create the histogram groups");
  for (std::size_t k = 0; k < total.size(); ++k) {
    const histogram& h = total[k];
    const hsize_t n = h.counts.size();
    h5_id space(H5Screate_simple(1, &n, nullptr), H5Sclose);
    h5_id d(H5Dcreate2(group.get(), h.name.c_str(), H5T_STD_U64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose);
    if (!d || H5Dwrite(d.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, h.counts.data()) < 0)
      fail("cannot write /histograms/" + h.name);
    describe(d.get(), h, path_);

    std::vector<std::uint64_t> matrix;
    matrix.reserve(lumis.size() * n);
    for (const lumi_summary& l : lumis) {
      if (k >= l.histograms.size() || l.histograms[k].counts.size() != n)
        fail("luminosity block histograms of other bins");
      matrix.insert(matrix.end(), l.histograms[k].counts.begin(), l.histograms[k].counts.end());
    }
    const hsize_t dims[2] = {lumis.size(), n};
    h5_id space2(H5Screate_simple(2, dims, nullptr), H5Sclose);
    h5_id d2(H5Dcreate2(per_lumi.get(), h.name.c_str(), H5T_STD_U64LE, space2.get(), H5P_DEFAULT, H5P_DEFAULT,
                        H5P_DEFAULT),
             H5Dclose);
    if (!d2 ||
        (!matrix.empty() && H5Dwrite(d2.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, matrix.data()) < 0))
      fail("cannot write /lumi_histograms/" + h.name);
    describe(d2.get(), h, path_);
  }
  std::vector<lumi_row> rows;
  for (const lumi_summary& l : lumis) rows.push_back({l.run, l.lumi, l.events});
  table t = make_table("lumis", lumi_type());
  append(t, rows.data(), rows.size());
}

void h5_output_file::attribute(const char* name, double value) {
  set_attribute(file_.get(), name, H5T_NATIVE_DOUBLE, &value, path_);
}
void h5_output_file::attribute(const char* name, std::uint64_t value) {
  set_attribute(file_.get(), name, H5T_NATIVE_UINT64, &value, path_);
}
void h5_output_file::attribute(const char* name, const std::string& value) {
  set_string_attribute(file_.get(), name, value, path_);
}

void h5_output_file::close() {
  events_ = {};
  jets_ = {};
  fat_jets_ = {};
  if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) fail("cannot flush the file");
  if (H5Fclose(file_.release()) < 0) fail("cannot close the file");
}

}  // namespace hep
