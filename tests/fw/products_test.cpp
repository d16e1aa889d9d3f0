// SPDX-License-Identifier: Apache-2.0
// Typed products: what a module makes is read by the others where it lies (const T&, never a
// copy), lives until its event has ended after the output modules ran, and is destroyed once.
// Misuse is refused where it can be: at finalize() for a product no module makes as declared
// (label, instance, type), while the event runs for a product not made or made twice, and for a
// token used by a module that did not get it.
#include <gtest/gtest.h>

#include <atomic>
#include <heddle/fw.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fw_test_support.hpp"

namespace {

using namespace heddle::fw;
using fw_test::finalize_error;

// --- products that count what happens to them.

// How many `counted` objects were made (constructed in any way), copied and destroyed, the most
// alive at once, and those destroyed before the output module wrote their event. Reset per run.
struct census {
  std::atomic<long> made{0}, copied{0}, destroyed{0}, alive{0}, most_alive{0}, early{0};
  std::vector<std::atomic<bool>> written;  // per event: the output module has written it
  explicit census(std::size_t events) : written(events) {}
  void born() {
    made.fetch_add(1);
    const long n = alive.fetch_add(1) + 1;
    long m = most_alive.load();
    while (n > m && !most_alive.compare_exchange_weak(m, n)) {
    }
  }
};
census* current = nullptr;

// A copyable product whose copies would show, with a digest of its own (digest.hpp).
struct counted {
  std::uint64_t event;
  std::vector<double> values;
  explicit counted(std::uint64_t e) : event(e), values(8, double(e) * 0.5) { current->born(); }
  counted(const counted& o) : event(o.event), values(o.values) {
    current->born();
    current->copied.fetch_add(1);
  }
  counted& operator=(const counted&) = delete;
  ~counted() {
    current->destroyed.fetch_add(1);
    current->alive.fetch_sub(1);
    if (!current->written[event].load()) current->early.fetch_add(1);
  }
};
std::uint64_t heddle_fw_digest(const counted& c) noexcept { return c.event * 1000003 + c.values.size(); }

// A move-only product: a pointer to its payload, which a move hands on and a copy cannot exist for.
struct move_only {
  std::unique_ptr<std::string> text;
};

// Per event, where the producer made (or put) each product; what the readers compare.
struct addresses {
  std::vector<std::atomic<const void*>> vector_data, string_at, payload_at, counted_at;
  explicit addresses(std::size_t events)
      : vector_data(events), string_at(events), payload_at(events), counted_at(events) {}
};

class maker final : public global::EDProducer<> {
 public:
  explicit maker(addresses* a)
      : a_(a),
        vec_(produces<std::vector<double>>()),
        str_(produces<std::string>("text")),
        move_(produces<move_only>()),
        counted_(produces<counted>("counted")) {}
  void produce(event& e, const event_setup&) const override {
    const std::uint64_t n = e.id().event;
    std::vector<double> v(100 + n % 7, double(n));
    a_->vector_data[n] = v.data();
    e.put(vec_, std::move(v));                                  // moved in: the buffer is the one made here
    std::string& s = e.emplace(str_, 200, char('a' + n % 26));  // built in place
    a_->string_at[n] = &s;
    auto payload = std::make_unique<std::string>("payload " + std::to_string(n));
    a_->payload_at[n] = payload.get();
    e.put(move_, move_only{std::move(payload)});
    a_->counted_at[n] = &e.emplace(counted_, n);
  }

 private:
  addresses* a_;
  put_token<std::vector<double>> vec_;
  put_token<std::string> str_;
  put_token<move_only> move_;
  put_token<counted> counted_;
};

// Reads every product and counts those not where the producer made them or not as it made them.
struct reads {
  get_token<std::vector<double>> vec;
  get_token<std::string> str;
  get_token<move_only> move;
  get_token<counted> cnt;
  std::uint64_t wrong(const event& e, const addresses& a) const {
    const std::uint64_t n = e.id().event;
    const std::vector<double>& v = e.get(vec);
    const std::string& s = e.get(str);
    const move_only& m = e.get(move);
    const counted& c = e.get(cnt);
    std::uint64_t bad = 0;
    bad += v.data() != a.vector_data[n].load() || v.size() != 100 + n % 7 || v[0] != double(n);
    bad += &s != a.string_at[n].load() || s.size() != 200 || s[0] != char('a' + n % 26);
    bad += m.text.get() != a.payload_at[n].load() || *m.text != "payload " + std::to_string(n);
    bad += &c != a.counted_at[n].load() || c.event != n;
    return bad;
  }
};

template <class M>
reads declare_reads(M& m) {
  return {m.template consume<std::vector<double>>("make"), m.template consume<std::string>("make:text"),
          m.template consume<move_only>("make"), m.template consume<counted>("make:counted")};
}

class reader final : public global::EDFilter<> {
 public:
  reader(addresses* a, std::atomic<long>* wrong) : a_(a), wrong_(wrong), r_(declare_reads(*this)) {}
  template <class T>
  get_token<T> consume(const char* tag) {
    return consumes<T>(tag);
  }
  bool filter(event& e, const event_setup&) const override {
    wrong_->fetch_add(long(r_.wrong(e, *a_)));
    return e.id().event % 3 != 0;
  }

 private:
  addresses* a_;
  std::atomic<long>* wrong_;
  reads r_;
};

class writer final : public global::OutputModule<> {
 public:
  writer(addresses* a, std::atomic<long>* wrong) : a_(a), wrong_(wrong), r_(declare_reads(*this)) {}
  template <class T>
  get_token<T> consume(const char* tag) {
    return consumes<T>(tag);
  }
  void write(const event& e) const override {
    wrong_->fetch_add(long(r_.wrong(e, *a_)));
    if (current->early.load() != 0) wrong_->fetch_add(1000);
    current->written[e.id().event] = true;
  }

 private:
  addresses* a_;
  std::atomic<long>* wrong_;
  reads r_;
};

struct products_job {
  addresses a;
  std::atomic<long> wrong{0};
  process p{"products"};
  explicit products_job(std::size_t events) : a(events) {
    p.add<maker>({"make"}, &a);
    p.add<reader>({"read"}, &a, &wrong);
    p.add<writer>({"write"}, &a, &wrong);  // every event: no selectEvents
    p.add_path("p", {"read"});
    p.add_end_path("e", {"write"});
  }
};

TEST(Products, AreReadWhereTheyLieAndDestroyedOnceAfterTheOutputs) {
  heddle_test::watchdog dog("products' lifetimes", std::chrono::seconds(300));
  const std::uint64_t events = heddle_test::scaled<std::uint64_t>(400, 100);
  std::uint64_t reference = 0;
  for (unsigned workers : {0u, 1u, 2u, 3u, 4u})  // 0: the single-threaded reference
    for (std::uint64_t in_flight : {1u, 3u, 16u, 64u}) {
      if (workers == 0 && in_flight > 1) continue;
      census c(events);
      current = &c;
      products_job job(events);
      const run_report r = workers == 0 ? run_single_threaded(job.p, fw_test::options(events, 1, 1))
                                        : run_threaded(job.p, fw_test::options(events, in_flight, workers));
      const std::string at = "workers " + std::to_string(workers) + ", in flight " + std::to_string(in_flight);
      EXPECT_EQ(r.events, events) << at;
      EXPECT_EQ(job.wrong.load(), 0) << at;
      EXPECT_EQ(c.copied.load(), 0) << at;                    // never copied: read as const T&
      EXPECT_EQ(c.made.load(), long(events)) << at;           // built in place, once per event
      EXPECT_EQ(c.destroyed.load(), long(events)) << at;      // and destroyed once
      EXPECT_EQ(c.early.load(), 0) << at;                     // after the output module wrote the event
      EXPECT_LE(c.most_alive.load(), long(in_flight)) << at;  // with its event, not later
      if (workers == 0) {
        reference = r.checksum;
      } else {
        EXPECT_EQ(r.checksum, reference) << at;
      }
      current = nullptr;
    }
}

// --- what a product adds to the checksum (digest.hpp).

template <class T>
class constant final : public global::EDProducer<> {
 public:
  constant(T value, std::string instance) : value_(std::move(value)), out_(produces<T>(std::move(instance))) {}
  void produce(event& e, const event_setup&) const override { e.put(out_, value_); }

 private:
  T value_;
  put_token<T> out_;
};

struct digested {
  int value;
};
std::uint64_t heddle_fw_digest(const digested& d) noexcept { return std::uint64_t(d.value) * 7919; }
struct opaque {  // no digest: counts nothing
  int value;
};

std::uint64_t checksum_of(int digested_value, int opaque_value, const std::string& text) {
  process p("digests");
  p.add<constant<digested>>({"d"}, digested{digested_value}, std::string());
  p.add<constant<opaque>>({"o"}, opaque{opaque_value}, std::string());
  p.add<constant<std::string>>({"s"}, text, std::string("i"));
  p.add_path("p", {"d", "o", "s"});
  return run_threaded(p, fw_test::options(10, 2)).checksum;
}

TEST(Products, TheChecksumCountsWhatTheDigestsSay) {
  const std::uint64_t base = checksum_of(1, 1, "one");
  EXPECT_EQ(checksum_of(1, 1, "one"), base);
  EXPECT_NE(checksum_of(2, 1, "one"), base);  // heddle_fw_digest, found by argument-dependent lookup
  EXPECT_NE(checksum_of(1, 1, "two"), base);  // std::string by its characters
  EXPECT_EQ(checksum_of(1, 2, "one"), base);  // a type without a digest counts nothing
}

// --- finalize(): every consumed (label, instance, type) made by exactly the module it names.

template <class T>
class reads_one final : public global::EDAnalyzer<> {
 public:
  explicit reads_one(const char* tag) : in_(consumes<T>(tag)) {}
  void analyze(const event& e, const event_setup&) const override { (void)e.get(in_); }

 private:
  get_token<T> in_;
};

std::string mismatch(const std::function<void(process&)>& add_reader) {
  process p("hand");
  p.add<constant<int>>({"a"}, 1, std::string());
  p.add<constant<int>>({.label = "b", .where = "reco.py:12"}, 2, std::string("tracks"));
  add_reader(p);
  p.add_path("p", {"r"});
  return finalize_error(p);
}

TEST(ProductErrors, TypeAndTagMismatchesNameBothModulesAndTheType) {
  const std::string type = mismatch([](process& p) { p.add<reads_one<double>>({"r"}, "a"); });
  EXPECT_NE(type.find("hand: module 'r': consumes double 'a': module 'a' makes no double 'a' (it makes int 'a')"),
            std::string::npos)
      << type;
  const std::string tag = mismatch([](process& p) {
    p.add<reads_one<int>>({.label = "r", .where = "reco.py:30"}, "b:jets");
  });
  EXPECT_NE(tag.find("hand: reco.py:30 'r': consumes int 'b:jets': reco.py:12 'b' makes no int 'b:jets' (it makes int "
                     "'b:tracks')"),
            std::string::npos)
      << tag;
  const std::string vec = mismatch([](process& p) { p.add<reads_one<std::vector<std::string>>>({"r"}, "b:tracks"); });
  EXPECT_NE(
      vec.find(
          "consumes std::vector<std::string> 'b:tracks': reco.py:12 'b' makes no std::vector<std::string> 'b:tracks'"),
      std::string::npos)
      << vec;
  const std::string missing = mismatch([](process& p) { p.add<reads_one<int>>({"r"}, "ghost"); });
  EXPECT_NE(missing.find("hand: module 'r': consumes int 'ghost': unknown label 'ghost'"), std::string::npos)
      << missing;
  // Right: it finalizes.
  EXPECT_EQ(mismatch([](process& p) { p.add<reads_one<int>>({"r"}, "b:tracks"); }), "");
}

TEST(ProductErrors, DeclaringTheSameProductTwiceIsALogicErrorAndTagsParse) {
  struct twice final : global::EDProducer<> {
    twice() {
      (void)produces<int>("x");
      (void)produces<double>("x");  // another type: fine
      (void)produces<int>("x");
    }
    void produce(event&, const event_setup&) const override {}
  };
  process p;
  EXPECT_THROW(p.add<twice>({"t"}), std::logic_error);
  EXPECT_THROW((void)input_tag::parse("a:b:c"), std::invalid_argument);
  EXPECT_EQ(input_tag::parse("a:b"), input_tag("a", "b"));
  // Text reads the same from a literal and from a std::string (a tag from a configuration, say).
  EXPECT_EQ(input_tag(std::string("a:b")), input_tag("a", "b"));
  EXPECT_EQ(input_tag("a:b"), input_tag("a", "b"));
  EXPECT_EQ(input_tag(std::string("a")), input_tag("a", ""));
  EXPECT_THROW(input_tag(std::string("a:")), std::invalid_argument);
}

// --- while the event runs.

// Puts its int on odd events only.
class lazy final : public global::EDProducer<> {
 public:
  lazy() : out_(produces<int>()) {}
  void produce(event& e, const event_setup&) const override {
    if (e.id().event % 2 == 1) e.put(out_, 1);
  }

 private:
  put_token<int> out_;
};

// Reads an int; keeps what get() threw (the first time, and every time), and rethrows it.
class needs final : public global::EDProducer<> {
 public:
  explicit needs(const char* tag) : in_(consumes<int>(tag)), out_(produces<int>()) {}
  void produce(event& e, const event_setup&) const override {
    try {
      e.put(out_, e.get(in_) + 1);
    } catch (const product_error& x) {
      std::lock_guard lock(m_);
      if (thrown.empty()) thrown = x.what();
      all_thrown.emplace_back(x.what());
      throw;
    }
  }
  // Whether `what` carries one of the texts get() threw (events fail concurrently in the threaded
  // processor: the run's error is whichever reached it first).
  bool carried_in(const std::string& what) const {
    std::lock_guard lock(m_);
    for (const std::string& t : all_thrown)
      if (what.find(t) != std::string::npos) return true;
    return false;
  }
  mutable std::string thrown;
  mutable std::vector<std::string> all_thrown;

 private:
  get_token<int> in_;
  put_token<int> out_;
  mutable std::mutex m_;
};

std::string module_failure(process& p, bool single, std::string* label = nullptr) {
  try {
    (single ? run_single_threaded : run_threaded)(p, fw_test::options(20, 4));
  } catch (const module_error& e) {
    if (label) *label = e.label();
    return e.what();
  }
  return "";
}

TEST(ProductErrors, AProductNotMadeFailsItsReaderNamingBothModulesAndTheEvent) {
  for (bool single : {true, false}) {
    process p("hand");
    p.add<lazy>({"lazy"});
    needs& n = p.add<needs>({"needs"}, "lazy");
    p.add_path("p", {"needs"});
    std::string label;
    const std::string what = module_failure(p, single, &label);
    EXPECT_EQ(label, "needs");
    // Only even events lack it; the reference meets event 0 first.
    EXPECT_NE(n.thrown.find("module 'needs' reads int 'lazy' in event "), std::string::npos) << n.thrown;
    EXPECT_NE(n.thrown.find(", but module 'lazy' did not make it there"), std::string::npos) << n.thrown;
    if (single) {
      EXPECT_NE(n.thrown.find("in event 0 (run 1, lumi 1)"), std::string::npos) << n.thrown;
    }
    EXPECT_NE(what.find("module 'needs' failed on event "), std::string::npos) << what;
    EXPECT_TRUE(n.carried_in(what)) << what;  // the module_error carries the text
  }
}

TEST(ProductErrors, WritingAProductTwiceIsAProductError) {
  struct twice final : global::EDProducer<> {
    twice() : out(produces<std::string>("x")) {}
    void produce(event& e, const event_setup&) const override {
      e.put(out, std::string(64, 'a'));
      try {
        e.emplace(out, 64, 'b');
      } catch (const product_error& x) {
        std::lock_guard lock(m);
        if (thrown.empty()) thrown = x.what();
        throw;
      }
    }
    put_token<std::string> out;
    mutable std::string thrown;
    mutable std::mutex m;
  };
  for (bool single : {true, false}) {
    process p("hand");
    twice& t = p.add<twice>({"twice"});
    p.add_path("p", {"twice"});
    std::string label;
    const std::string what = module_failure(p, single, &label);
    EXPECT_EQ(label, "twice");
    EXPECT_NE(t.thrown.find("module 'twice' writes std::string 'twice:x' twice in event "), std::string::npos)
        << t.thrown;
    EXPECT_NE(what.find("failed on event"), std::string::npos) << what;
  }
}

// A token is an index into its own module's declarations: used by another module (or invalid), it
// is refused with std::logic_error, not read as whatever that module declared.
TEST(ProductErrors, ATokenOfAnotherModuleIsALogicError) {
  struct shared_tokens {
    get_token<int> read;
    put_token<int> write;
  };
  struct owner final : global::EDProducer<> {
    explicit owner(shared_tokens* s) : tokens(s) {
      s->read = consumes<int>("source");
      s->write = produces<int>();
    }
    void produce(event& e, const event_setup&) const override { (void)e.get(tokens->read); }
    shared_tokens* tokens;
  };
  // Declares a double where the owner declared its int: same indices, other types.
  struct thief final : global::EDProducer<> {
    thief(shared_tokens* s, int how) : s_(s), how_(how) {
      (void)consumes<double>("dsource");
      (void)produces<double>();
    }
    void produce(event& e, const event_setup&) const override {
      try {
        if (how_ == 0) (void)e.get(s_->read);
        else if (how_ == 1) e.put(s_->write, 1);
        else (void)e.get(get_token<int>());
      } catch (const product_error&) {
        outcome = "product_error";
        throw;
      } catch (const std::logic_error& x) {
        outcome = x.what();
        throw;
      }
    }
    mutable std::string outcome;  // one event in flight: no race

   private:
    shared_tokens* s_;
    int how_;
  };
  for (int how : {0, 1, 2}) {
    shared_tokens s;
    process p("hand");
    p.add<constant<int>>({"source"}, 3, std::string());
    p.add<constant<double>>({"dsource"}, 3.0, std::string());
    p.add<owner>({"owner"}, &s);
    thief& t = p.add<thief>({"thief"}, &s, how);
    p.add_path("p", {"owner", "thief"});
    try {
      run_threaded(p, fw_test::options(3, 1));
      ADD_FAILURE() << "ran with another module's token";
    } catch (const module_error& e) {
      EXPECT_EQ(e.label(), "thief");
    }
    EXPECT_NE(t.outcome.find("module 'thief' used a token (index "), std::string::npos) << how << ": " << t.outcome;
    EXPECT_NE(t.outcome.find("a token is only valid in the module that declared it"), std::string::npos) << t.outcome;
  }
}

}  // namespace
