#include "counters/kernel_counters.hpp"

#include "counters/ncu_metrics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>

namespace kbench::counters {
namespace {

constexpr const char* kDuration = "gpu__time_duration.sum";
constexpr const char* kSmClock = "sm__cycles_elapsed.avg.per_second";
constexpr const char* kDramClock = "dram__cycles_elapsed.avg.per_second";
constexpr const char* kDramPeak = "dram__bytes.sum.peak_sustained";
constexpr const char* kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr const char* kStallSuffix = "_per_issue_active.ratio";
// Below this share of peak on both the SM and memory sides, the kernel is bound by latency
// (launch, occupancy, dependencies), not by a unit: Nsight Compute's own guidance (its SOL
// section flags under 60 %).
constexpr double kLatencyBoundBelowPct = 60.0;
// Tensor-path "ops" of sm__ops_path_tensor_src_* count FLOP (a fused multiply-add is two).
constexpr double kTensorFlopPerOp = 1.0;

struct FlopKind {
  const char* name; // precision as reported
  const char* add;
  const char* mul;
  const char* fma;
  const char* fma_peak; // per cycle, whole GPU
};
constexpr FlopKind kFlopKinds[] = {
    {"fp32", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
     "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"},
    {"fp16", "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
     "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained"},
    {"fp64", "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
     "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"},
};

std::string percent(double v) {
  return fmt::format("{:.1f} %", v);
}

// Pipe name of a pipe-utilisation metric, or "" for a breakdown of a pipe (by predicate,
// command or type), which would only repeat its pipe.
std::string pipe_name(const std::string& metric) {
  static const std::regex cycles(
      R"(^sm__pipe_([a-z0-9_]+)_cycles_active\.avg\.pct_of_peak_sustained_active$)");
  static const std::regex issued(
      R"(^sm__inst_executed_pipe_([a-z0-9_]+)\.avg\.pct_of_peak_sustained_active$)");
  std::smatch match;
  if (!std::regex_match(metric, match, cycles) && !std::regex_match(metric, match, issued)) {
    return "";
  }
  const std::string name = match[1];
  for (const char* part : {"_pred_", "_cmd_", "_type_", "_ops_", "_mem_", "_realtime"}) {
    if (name.find(part) != std::string::npos) {
      return "";
    }
  }
  return name;
}

// Source precision of a tensor-path op count ("bf16" of ..._src_bf16_dst_fp32.sum), or "".
std::string tensor_source(const std::string& metric) {
  static const std::regex ops(R"(^sm__ops_path_tensor_src_([a-z0-9]+)(_dst_[a-z0-9]+)?\.sum$)");
  std::smatch match;
  return std::regex_match(metric, match, ops) ? std::string(match[1]) : "";
}

class Deriver {
  static constexpr std::size_t kMaxFields = 64;

public:
  Deriver(const NcuKernel& kernel, const std::string& set, const GpuSpecs& specs)
      : m_k(kernel), m_set(set), m_specs(specs) {
    m_out.name = kernel.name;
    // Fields are filled through references while later ones are added: no reallocation.
    m_out.fields.reserve(kMaxFields);
  }

  KernelCounters run() {
    duration();
    speed_of_light();
    dram();
    flops();
    roofline();
    pipes_and_sol();
    bottleneck();
    occupancy();
    launch();
    caches();
    stalls();
    return std::move(m_out);
  }

private:
  const double* metric(const char* name) const { return m_k.find(name); }

  std::string missing(const std::string& what) const {
    if (!collected_by(what, m_set)) {
      return fmt::format("not collected by --profile {} (use --profile full)", m_set);
    }
    if (what.starts_with("regex:^")) {
      return fmt::format("ncu reported no {}* metric for this kernel (this GPU or ncu version "
                         "lacks it)",
                         what.substr(7));
    }
    return fmt::format("ncu did not report {} for this kernel (this GPU or ncu version lacks it)",
                       what);
  }

  CounterField& add(const std::string& id, const std::string& unit) {
    if (m_out.fields.size() == kMaxFields) {
      throw std::logic_error("kernel_counters: raise kMaxFields");
    }
    m_out.fields.push_back({id, std::nullopt, "", unit, "", ""});
    return m_out.fields.back();
  }

  void copy(const std::string& id, const char* name, const std::string& unit, double scale = 1) {
    auto& field = add(id, unit);
    if (const double* v = metric(name)) {
      field.value = *v * scale;
    } else {
      field.reason = missing(name);
    }
  }

  // Seconds of the kernel; 0 when ncu gave no duration (then no rate can be formed).
  double seconds() const {
    const double* ns = metric(kDuration);
    return ns ? *ns * 1e-9 : 0;
  }

  void duration() { copy("duration", kDuration, "us", 1e-3); }

  void speed_of_light() {
    copy("sm_throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%");
    copy("memory_throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
         "%");
    copy("dram_throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%");
  }

  void dram() {
    const double* read = metric("dram__bytes_read.sum");
    const double* write = metric("dram__bytes_write.sum");
    auto& bytes = add("dram_bytes", "B");
    auto& bandwidth = add("dram_bandwidth", "GB/s");
    if (!read || !write) {
      bytes.reason = bandwidth.reason = missing("dram__bytes_read.sum");
      return;
    }
    m_dram_bytes = *read + *write;
    bytes.value = m_dram_bytes;
    if (seconds() > 0) {
      bandwidth.value = *m_dram_bytes / seconds() / 1e9;
    } else {
      bandwidth.reason = missing(kDuration);
    }
  }

  void flops() {
    const double* sm_clock = metric(kSmClock);
    for (const auto& kind : kFlopKinds) {
      auto& rate = add(fmt::format("{}_flops", kind.name), "FLOP/s");
      auto& use = add(fmt::format("{}_utilization", kind.name), "%");
      const double *a = metric(kind.add), *m = metric(kind.mul), *f = metric(kind.fma);
      if (!a || !m || !f || seconds() <= 0) {
        rate.reason = use.reason = missing(!a   ? kind.add
                                           : !m ? kind.mul
                                           : !f ? kind.fma
                                                : kDuration);
        continue;
      }
      const double flop = *a + *m + 2 * *f;
      m_flop[kind.name] = flop;
      rate.value = flop / seconds();
      const double* peak = metric(kind.fma_peak);
      if (peak && sm_clock && *peak > 0) {
        use.value = 100.0 * *rate.value / (2 * *peak * *sm_clock);
        use.detail = "of 2 x FMA/cycle x the SM clock under ncu";
      } else {
        use.reason = missing(kind.fma_peak);
      }
    }
    tensor_flops(sm_clock);
  }

  void tensor_flops(const double* sm_clock) {
    auto& rate = add("tensor_flops", "FLOP/s");
    auto& use = add("tensor_utilization", "%");
    auto& source = add("tensor_precision", "");
    double best_ops = -1;
    for (const auto& [name, ops] : m_k.values) {
      const std::string src = tensor_source(name);
      if (!src.empty() && ops > best_ops) {
        best_ops = ops;
        m_tensor_source = src;
        m_tensor_metric = name;
      }
    }
    if (best_ops < 0 || seconds() <= 0) {
      rate.reason = use.reason = source.reason =
          best_ops < 0 ? missing("regex:^sm__ops_path_tensor_src_") : missing(kDuration);
      return;
    }
    double ops = 0;
    for (const auto& [name, count] : m_k.values) {
      ops += tensor_source(name).empty() ? 0 : count;
    }
    m_flop["tensor"] = ops * kTensorFlopPerOp;
    rate.value = m_flop["tensor"] / seconds();
    if (ops == 0) {
      source.text = "none";
      source.detail = "no tensor-core work";
      use.value = 0;
      return;
    }
    source.text = m_tensor_source;
    const double* peak = m_k.find(m_tensor_metric + ".peak_sustained");
    if (peak && sm_clock && *peak > 0) {
      use.value = 100.0 * best_ops / (*peak * *sm_clock * seconds());
      use.detail = fmt::format("{} ops of the tensor path's {} peak per cycle", m_tensor_source,
                               m_tensor_source);
    } else {
      use.reason = missing(m_tensor_metric + ".peak_sustained");
    }
  }

  // The precision doing most of the FLOPs, and its peak (dense, boost clock) from the table.
  void roofline() {
    auto& intensity = add("arithmetic_intensity", "FLOP/B");
    auto& precision = add("precision", "");
    auto& ridge = add("ridge_point", "FLOP/B");
    double total = 0, most = 0;
    std::string kind;
    for (const auto& [name, flop] : m_flop) {
      total += flop;
      if (flop > most) {
        most = flop;
        kind = name;
      }
    }
    m_out.flop = total;
    if (m_flop.empty() || !m_dram_bytes) {
      intensity.reason = precision.reason = ridge.reason = missing(
          m_flop.empty() ? "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" : "dram__bytes");
      return;
    }
    if (*m_dram_bytes > 0) {
      intensity.value = total / *m_dram_bytes;
    } else {
      intensity.reason = "no DRAM traffic: the data stayed in L2";
    }
    if (kind.empty()) {
      precision.text = "none";
      precision.detail = "no floating-point instructions";
      ridge.reason = "no floating-point work, so no precision to take a ridge point for";
      return;
    }
    // The table's key: a DMMA (FP64 tensor) source has its own peak, fp64_tensor.
    const std::string key = kind != "tensor"            ? kind
                            : m_tensor_source == "fp64" ? "fp64_tensor"
                                                        : m_tensor_source;
    precision.text = kind == "tensor" ? m_tensor_source + " tensor" : key;
    m_out.peak_key = key;
    if (kind == "fp16") { // CUDA-core half precision: the table lists tensor peaks only
      const double *peak =
                       metric("sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained"),
                   *clock = metric(kSmClock), *dram = metric(kDramPeak),
                   *dram_clock = metric(kDramClock);
      if (peak && clock && dram && dram_clock && *dram > 0) {
        ridge.value = (2 * *peak * *clock) / (*dram * *dram_clock);
        ridge.detail = "from ncu's peaks at the profiled clocks (the table has no CUDA-core FP16)";
      } else {
        ridge.reason = missing(kDramPeak);
      }
      return;
    }
    const auto peak = m_specs.dense_tflops.find(key);
    if (peak == m_specs.dense_tflops.end() || m_specs.dram_bandwidth_gbs.value <= 0) {
      ridge.reason = fmt::format("the peak table has no {} figure for {}", key, m_specs.row);
      return;
    }
    ridge.value = peak->second.value * 1e12 / (m_specs.dram_bandwidth_gbs.value * 1e9);
    ridge.detail = fmt::format("{} TFLOP/s / {} GB/s ({})", peak->second.value,
                               m_specs.dram_bandwidth_gbs.value, m_specs.row);
  }

  // Latency when neither side reaches 60 % of its peak; otherwise the busier side, where the
  // compute side is the larger of SM throughput and the dominant pipe's utilisation: a
  // tensor-core matmul keeps its pipe near 97 % while its shared-memory and L2 traffic put
  // ncu's memory throughput (every memory unit, not DRAM alone) near 95 %.
  void bottleneck() {
    auto& field = add("bottleneck", "");
    const auto sm = m_out.value("sm_throughput"), memory = m_out.value("memory_throughput");
    if (!sm || !memory) {
      field.reason = missing("sm__throughput.avg.pct_of_peak_sustained_elapsed");
      return;
    }
    const double compute = std::max(*sm, m_out.value("dominant_pipe_utilization").value_or(0));
    if (std::max(compute, *memory) < kLatencyBoundBelowPct) {
      field.text = "latency";
      field.detail = fmt::format(
          "neither the SMs ({}) nor memory ({}) reach {:.0f} % of peak: launch, occupancy or "
          "dependency latency bounds it",
          percent(compute), percent(*memory), kLatencyBoundBelowPct);
    } else {
      field.text = *memory > compute ? "memory" : "compute";
      field.detail = fmt::format("memory throughput {}, compute (SM or busiest pipe) {}",
                                 percent(*memory), percent(compute));
    }
  }

  void pipes_and_sol() {
    auto& pipe = add("dominant_pipe", "");
    auto& use = add("dominant_pipe_utilization", "%");
    double best = -1;
    for (const auto& [name, value] : m_k.values) {
      const std::string pipe_of = pipe_name(name);
      // Hopper's "shared" pipe is the union of the FP16 and tensor pipes: on a tie, the
      // specific pipe names the work.
      if (!pipe_of.empty() && (value > best || (value == best && pipe.text == "shared"))) {
        best = value;
        pipe.text = pipe_of;
        pipe.detail = name;
      }
    }
    if (best < 0) {
      pipe.reason = use.reason = missing("regex:^sm__pipe_");
    } else {
      use.value = best;
    }
    auto& sol = add("sol_score", "");
    const auto dram = m_out.value("dram_throughput");
    if (!dram || !use.value) {
      sol.reason = missing(!dram ? "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
                                 : "regex:^sm__pipe_");
      return;
    }
    sol.value = std::clamp(std::max(*dram, *use.value) / 100.0, 0.0, 1.0);
    sol.detail = fmt::format("max(DRAM {}, {} pipe {}) / 100", percent(*dram), pipe.text,
                             percent(*use.value));
  }

  void occupancy() {
    copy("achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", "%");
    copy("theoretical_occupancy", "sm__maximum_warps_per_active_cycle_pct", "%");
    auto& limiter = add("occupancy_limiter", "");
    const std::pair<const char*, const char*> limits[] = {
        {"registers", "launch__occupancy_limit_registers"},
        {"shared memory", "launch__occupancy_limit_shared_mem"},
        {"block size", "launch__occupancy_limit_warps"},
        {"blocks per SM", "launch__occupancy_limit_blocks"}};
    double least = 0;
    std::vector<std::string> parts, limiting;
    for (const auto& [label, name] : limits) {
      const double* blocks = metric(name);
      if (!blocks) {
        limiter.reason = missing(name);
        return;
      }
      parts.push_back(fmt::format("{} {:g}", label, *blocks));
      if (limiting.empty() || *blocks < least) {
        least = *blocks;
        limiting = {label};
      } else if (*blocks == least) {
        limiting.push_back(label);
      }
    }
    limiter.text = fmt::format("{}", fmt::join(limiting, " and "));
    limiter.detail = fmt::format("blocks per SM each allows: {}", fmt::join(parts, ", "));
  }

  void launch() {
    copy("registers_per_thread", "launch__registers_per_thread", "register/thread");
    copy("shared_memory_static", "launch__shared_mem_per_block_static", "B/block");
    copy("shared_memory_dynamic", "launch__shared_mem_per_block_dynamic", "B/block");
    copy("block_size", "launch__block_size", "threads");
    copy("grid_size", "launch__grid_size", "blocks");
    copy("waves_per_sm", "launch__waves_per_multiprocessor", "waves");
  }

  void caches() {
    copy("l1_hit_rate", "l1tex__t_sector_hit_rate.pct", "%");
    copy("l2_hit_rate", "lts__t_sector_hit_rate.pct", "%");
    for (const auto& [id, name, what] :
         {std::tuple{"global_load_sectors_per_request",
                     "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio",
                     "loads"},
          std::tuple{"global_store_sectors_per_request",
                     "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio",
                     "stores"}}) {
      copy(id, name, "sector/request");
      auto& field = m_out.fields.back();
      if (field.value && *field.value == 0) {
        field.value.reset();
        field.reason = fmt::format("no global {} (ncu reports 0 sectors per request)", what);
      }
    }
  }

  // Shares of the stall cycles: "selected" is left out (the warp issued; not a stall), so the
  // shares are of stalled cycles only, where ncu's Warp State section divides by all cycles.
  void stalls() {
    std::vector<StallShare> all;
    double total = 0;
    for (const auto& [name, value] : m_k.values) {
      if (!name.starts_with(kStallPrefix) || !name.ends_with(kStallSuffix)) {
        continue;
      }
      const std::string reason = name.substr(std::string_view(kStallPrefix).size(),
                                             name.size() - std::string_view(kStallPrefix).size() -
                                                 std::string_view(kStallSuffix).size());
      if (reason != "selected") {
        all.push_back({reason, value});
        total += value;
      }
    }
    if (all.empty()) {
      m_out.stalls_reason = missing(std::string("regex:^") + kStallPrefix);
      return;
    }
    if (total <= 0) {
      m_out.stalls_reason = "no stall cycles were counted";
      return;
    }
    std::stable_sort(all.begin(), all.end(), [](const StallShare& a, const StallShare& b) {
      return a.percent > b.percent;
    });
    double top = 0;
    for (std::size_t i = 0; i < all.size() && i < 5; ++i) {
      m_out.stalls.push_back({all[i].reason, 100.0 * all[i].percent / total});
      top += m_out.stalls.back().percent;
    }
    m_out.stalls.push_back({"other", std::max(0.0, 100.0 - top)});
  }

  const NcuKernel& m_k;
  const std::string& m_set;
  const GpuSpecs& m_specs;
  KernelCounters m_out;
  std::optional<double> m_dram_bytes;
  std::map<std::string, double> m_flop; // by kind: fp32, fp16, fp64, tensor
  std::string m_tensor_source, m_tensor_metric;
};

} // namespace

const CounterField* KernelCounters::field(const std::string& id) const {
  const auto it =
      std::find_if(fields.begin(), fields.end(), [&](const CounterField& f) { return f.id == id; });
  return it == fields.end() ? nullptr : &*it;
}

std::optional<double> KernelCounters::value(const std::string& id) const {
  const CounterField* f = field(id);
  return f ? f->value : std::nullopt;
}

KernelCounters derive_kernel(const NcuKernel& kernel, const std::string& set,
                             const GpuSpecs& specs) {
  return Deriver(kernel, set, specs).run();
}

} // namespace kbench::counters
