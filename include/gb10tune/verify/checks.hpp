// The checks of `gb10tune verify`, one function per group, each turning what was read about
// one llama-server process into findings (ok / warn / fail, the evidence, the K-fact, the
// fix). They print nothing and read nothing but their arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gb10tune/gpu/gpu_info.hpp"
#include "gb10tune/server/rules.hpp"
#include "gb10tune/sys/cpuinfo.hpp"
#include "gb10tune/sys/process_info.hpp"
#include "gb10tune/util/expected.hpp"
#include "gb10tune/verify/server_probe.hpp"

namespace gb10tune::verify {

using server::Finding;
using server::Severity;

// What one process looked like, read once from /proc.
struct ProcessSnapshot {
  sys::ServerCandidate process;
  std::optional<platform::Environment> env;  // nullopt when environ could not be read
  std::optional<sys::ProcError> env_error;
  std::optional<sys::ProcessMemory> memory;
  std::optional<sys::ProcError> memory_error;
  bool changed = false;  // the process exited or its pid was reused while it was read
};

// Reads environ and memory of `process` and re-reads its stat afterwards, so that a process
// that exited (or whose pid was reused) during the reads is marked `changed`.
ProcessSnapshot take_snapshot(const platform::Sysroot& root, sys::ServerCandidate process);

// One GPU's part of the launch plan (the record's plan.devices.gpus[]).
struct DeviceExpectation {
  std::string name;                 // "CUDA0"
  std::string description;          // "NVIDIA GeForce RTX 4090"
  std::string pci_bus_id;           // "" in records that predate it: matched by position then
  std::uint64_t planned_bytes = 0;  // weights + KV + compute + CUDA runtime + projector
  // Of planned_bytes, what a server holds only once it has served prompts (cuBLAS, the memory
  // pool): an idle server after load may hold that much less. 0 in older records.
  std::uint64_t service_bytes = 0;
};

// What the running server should look like, from the launch record or the flags.
struct Expectations {
  std::optional<std::uint32_t> slots;
  std::optional<std::uint64_t> ctx_per_slot;  // as the server reports it per slot
  std::optional<bool> speculative;            // speculative decoding expected on
  std::optional<std::string> spec_type;       // "draft-mtp", "none", …; nullopt when not set
  std::optional<std::uint32_t> draft_n_max;   // --spec-draft-n-max (3 when unset with a type)
  std::string spec_origin;                    // where spec_type was set ("command line argv[9]")
  std::optional<bool> model_has_mtp;          // from the model's header
  std::optional<std::string> model_path;      // as given to the server (-m); /props echoes it
  std::optional<std::uint64_t> weights_bytes;
  std::optional<std::uint64_t> kv_bytes;  // KV + recurrent state
  // What the process should hold once loaded (the plan's load figure plus its calibration),
  // the prompt cache's limit that may come on top, and "cpu"/"cuda" (how to measure).
  std::optional<std::uint64_t> load_bytes;
  // The part of load_bytes a process touches only as batches use it (plan/expected_memory.hpp);
  // nullopt: the record does not say (an older gb10tune).
  std::optional<std::uint64_t> on_demand_bytes;
  std::uint64_t cache_ram_bytes = 0;
  std::uint64_t projector_bytes = 0;  // the mmproj's part of load_bytes (weights + compute)
  std::string backend;
  // Discrete GPUs: the record's plan per device (nullopt: the record has none — it predates
  // per-device plans or was planned as one pool; `no_device_plan` says which) and the host part
  // at load (weights, KV, buffers, projector, runtime) and in all (with prompt cache, margin and
  // calibration).
  std::optional<std::vector<DeviceExpectation>> devices;
  std::string no_device_plan;
  std::optional<std::uint64_t> host_load_bytes;
  std::uint64_t host_total_bytes = 0;
  // Of the host part at load, what comes only with the first prompts (cuBLAS, driver state).
  std::uint64_t host_service_bytes = 0;
  std::uint64_t host_weights_bytes = 0;  // the host part's mapped weights
  bool plan_estimate = false;  // the plan was an estimate (unsupported architecture, --force)
  std::string source;          // "launch record" or "flags"
};

// The per-slot context llama-server (3f545be) reports in /props and /slots for a context of
// `n_ctx` cells and `slots` slots: n_ctx rounded up to 256, per stream (n_ctx / slots, rounded
// up to 256) unless the pool is unified, capped at the model's training context `n_ctx_train`
// (0: unknown, no cap). `n_ctx` 0 means the training context per stream.
std::uint64_t server_ctx_per_slot(std::uint64_t n_ctx, std::uint32_t slots, bool kv_unified,
                                  std::uint64_t n_ctx_train);

// What verify read from the server's HTTP endpoints, kept for the checks that combine sources.
struct ServerAnswers {
  std::optional<PropsAnswer> props;
  std::optional<std::vector<SlotAnswer>> slots;
  std::optional<SmokeTimings> smoke;
};

// Check 1 (K2): GGML_CUDA_ENABLE_UNIFIED_MEMORY with any value fails; other GGML_CUDA_*
// variables are listed; an environ that could not be read fails and says to run with sudo.
std::vector<Finding> check_environment(const ProcessSnapshot& snapshot);

// What one run of the server logged about where the model went (llama.cpp 2026-08): the
// warning a build without a GPU backend prints whenever -ngl is given (at any verbosity), and
// from -lv 4 on `load_tensors: offloaded N/M layers to GPU` and the model buffer lines.
struct GpuLogEvidence {
  std::string log_name;                      // the file, for messages
  std::string no_gpu_line;                   // "warning: no usable GPU found, …"; "" if absent
  std::optional<std::uint32_t> offloaded;    // N of "offloaded N/M layers to GPU"
  std::optional<std::uint32_t> offloadable;  // M of the same line
  std::vector<std::string> device_buffers;   // model buffers on a device: "CUDA0 1858.63 MiB"
  std::vector<std::string> host_buffers;     // in host memory: "CPU_Mapped 2.50 MiB"

  // The log shows the model (or part of it) outside device memory: the warning, fewer layers
  // offloaded than there are, or model buffers only in host memory.
  bool against_gpu() const;
  // The log shows every layer offloaded and model buffers on a device. "offloaded M/M" alone
  // is not enough: a build without a GPU but with the RPC backend prints it too.
  bool all_layers_on_gpu() const;
  // The server has no GPU to put layers on (the warning, or every buffer in host memory
  // although no layer was held back), as opposed to layers held back by -ngl or by fitting.
  bool no_gpu_backend() const;
  // One line summing up what was found, naming the log, and why it counts against the GPU.
  std::string describe() const;
  // What to do when against_gpu().
  std::string fix() const;
};

// The part of `log_text` written by the latest start: from the last `==== gb10tune … launch`
// header, else from the last `common_params_print_info:` line and the warnings just above it
// (the log is appended to across restarts), else all of it.
std::string_view latest_run(std::string_view log_text);

// Reads the GPU evidence of `log_text`'s latest run (see latest_run).
GpuLogEvidence read_gpu_evidence(std::string_view log_text, std::string_view log_name);

// Check 2 (K3): resident memory against the plan, and NVML's per-process GPU figure: under
// 1 GiB while RSS is over 10 GB is the managed path; a process NVML does not list, or a log
// that shows the model in host memory, fails. Without NVML and without the log the answer is
// unknown (warn), never ok. `nvml` may be unloaded; `log` is null when no log was read. With a
// planned load figure, also "plan-vs-measured": the measured memory (plan/calibration.hpp)
// compared like with like (plan/expected_memory.hpp: what the process can have touched so far),
// with the error in % of the figure at load; ok only within 5% on both sides: a warning when the
// process (or its peak, VmHWM) holds more than 5% over the plan with every buffer touched plus
// the prompt cache's limit, when it holds more than 5% less than the figure at load (the plan is
// far above it: safe, but wrong), or when the figure cannot be measured. Then the findings of
// check_device_memory (discrete GPUs).
std::vector<Finding> check_memory(const ProcessSnapshot& snapshot, const gpu::NvmlReport& nvml,
                                  const Expectations& expected,
                                  const GpuLogEvidence* log = nullptr);

// Discrete GPUs, a server started by launch with the CUDA backend: each GPU's memory now
// against the record's plan for it (id device-plan-vs-measured, one finding per GPU), and the
// host side (host-plan-vs-measured). The device figure is NVML's per-process figure for the pid
// on that GPU (matched by PCI bus id) or, where NVML gives none, the GPU's total in use (all
// processes; the evidence says which); ok within 5% of the plan, a warning outside it, a
// failure when the server holds nothing on a GPU its plan puts memory on. The host: RSS (mapped
// weights not read yet counted as read) against the host part, a warning above it by more than
// 5%, or below its figure at load by more than 5% (a plan far above the process). A record without
// a per-device plan on a machine whose NVML reports discrete GPUs gives one warning, "unknown"; a
// GB10 (one pool) or a CPU plan gives no finding: plan-vs-measured covers them.
std::vector<Finding> check_device_memory(const ProcessSnapshot& snapshot,
                                         const gpu::NvmlReport& nvml, const Expectations& expected);

// Backs the K1 finding "all layers on the GPU" (id all-layers-on-gpu, which judges only the
// -ngl flag) with evidence: the log shows the layers on a device (ok) or not (fail), or NVML
// holds at least the planned weights for `pid` (ok); without either it becomes a warning
// naming what is missing. Findings with other ids are left alone.
void confirm_gpu_layers(Finding& finding, const GpuLogEvidence* log, const gpu::NvmlReport& nvml,
                        int pid, const Expectations& expected);

// Why the GPU checks (K1 all-layers-on-gpu, K3 device-memory-path) do not apply on this
// machine: it has no NVIDIA GPU (`gpu_seen` false: its driver lists none in
// /proc/driver/nvidia/gpus and it is not a GB10; and NVML did not load). nullopt when they
// apply.
std::optional<std::string> gpu_checks_not_applicable(bool gpu_seen, const gpu::NvmlReport& nvml);

// Marks the GPU checks among `findings` not applicable (severity, no fix), `why` leading their
// evidence and what they saw kept after it. Other findings are left alone.
void mark_gpu_checks_not_applicable(std::vector<Finding>& findings, const std::string& why);

// Check 4: /health, then /props and /slots against `expected`. `url` names the server in the
// evidence. What /props and /slots answered is stored in `answers` when it is given.
std::vector<Finding> check_server(ServerProbe& probe, const Expectations& expected,
                                  std::string_view url, ServerAnswers* answers = nullptr);

// Check 6 (--smoke): one short chat completion and its timings (stored in `answers` when given).
std::vector<Finding> check_smoke(ServerProbe& probe, ServerAnswers* answers = nullptr);

// K4: does the server draft as planned? Combines every place that knows: `planned` (the launch
// record, or the flags when there is none), `flags` (the process's own settings: argv,
// config.ini, LLAMA_ARG_*; null when unread), /slots' `speculative` (what the server runs),
// the smoke completion's draft_n, and /props only as the per-request default it is in the
// 2026-08 build. Fails when speculative decoding is planned (or the model has an MTP head)
// and the server does not draft, naming the flag to pass; the evidence says which source
// says what when they disagree. Warns when nothing tells what the server runs.
Finding check_speculative(const Expectations& planned, const Expectations* flags,
                          const ServerAnswers& answers);

// Where check_log may look for the build's CPU features besides the log.
struct LogCheckSources {
  bool launched = false;  // gb10tune launch started the server (its record names it)
  // The system_info line of the server's binary (server::read_build_system_info), or an Error;
  // asked only when the log's last start has no such line. Empty: no other source.
  std::function<Expected<std::string>()> binary_system_info;
};

// Check 5: the `system_info:` line of the server's last start in `log_text` (the log is
// appended to; builds of 2026-08 print it only at -lv 4), else the one `sources` gets from the
// binary, against the CPU's real features (K11, the GGML_NATIVE trap); without either a
// warning saying what is unknown. Then how often a prompt state was skipped since that start
// (`exceeds cache size limit`, K8). `log_name` names the file.
std::vector<Finding> check_log(std::string_view log_text, std::string_view log_name,
                               const sys::CpuInfo* cpu, const LogCheckSources& sources = {});

// The ggml CPU feature names (`DOTPROD`, `MATMUL_INT8`, `SVE`, `AVX2`, …) listed as "= 1" in
// a system_info line.
std::vector<std::string> parse_system_info_features(std::string_view line);

}  // namespace gb10tune::verify
