// What tune re-plans and what it credits before it starts a candidate: a candidate of a knob
// that does not change the memory plan is never refused; one that does is refused only when it
// does not fit even without the prompt cache launch's fit raised; what stopping the running
// server frees counts its anonymous and shared pages and page tables, not its mapped file.
#include "gb10tune/tune/candidate_memory.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::tune {
namespace {

using nlohmann::json;

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;

// A start launch fitted to the whole budget: 10 GiB may be used, 1 GiB of it the prompt cache.
CandidatePlanFigures filled_budget(std::int64_t margin) {
  CandidatePlanFigures p;
  p.available_bytes = 10 * kGiB;
  p.need_bytes = static_cast<std::uint64_t>(static_cast<std::int64_t>(p.available_bytes) - margin);
  p.margin_bytes = margin;
  p.fits = margin >= 0;
  p.reserve_bytes = 4 * kGiB;
  p.freed_bytes = 3 * kGiB;
  p.cache_ram_bytes = 1 * kGiB;
  p.refusal = "the plan does not fit in memory; nothing was started. What fits: 1 slot(s)";
  return p;
}

TEST(CandidateMemory, OnlyTheKnobsOfTheMemoryPlanCountAsAChange) {
  const json start = {{"draft_n_max", 4}, {"draft_p_min", 0.0}, {"threads", 2}, {"ubatch", 512}};
  EXPECT_TRUE(memory_knobs_changed(start, {{"draft_n_max", 4}, {"draft_p_min", 0.5}}).empty());
  EXPECT_TRUE(memory_knobs_changed(start, {{"threads", 1}}).empty());
  EXPECT_EQ(memory_knobs_changed(start, {{"draft_n_max", 5}, {"draft_p_min", 0.5}}),
            std::vector<std::string>{"draft_n_max"});
  // Table order, and a memory knob the start did not have counts.
  EXPECT_EQ(memory_knobs_changed(start, {{"flash_attn", "off"}, {"ubatch", 1024}}),
            (std::vector<std::string>{"ubatch", "flash_attn"}));
}

TEST(CandidateMemory, ACandidateThatChangesNoMemoryIsNeverRefused) {
  // Even when free memory fell since the launch so far that the start's own plan would not fit.
  const CandidateMemory verdict = judge_candidate_memory({}, filled_budget(-3 * kGiB), "threads 1");
  EXPECT_EQ(verdict.verdict, MemoryVerdict::unchanged);
  EXPECT_TRUE(verdict.text.empty());
}

TEST(CandidateMemory, AFittingPlanRunsAsPlanned) {
  const CandidateMemory verdict =
      judge_candidate_memory({"draft_n_max"}, filled_budget(0), "draft_n_max 5");
  EXPECT_EQ(verdict.verdict, MemoryVerdict::fits);
}

TEST(CandidateMemory, ThePromptCacheLaunchRaisedNeverBlocksACandidateByItself) {
  // MemAvailable 12 MiB lower than at launch, and a deeper draft needing 1 MiB more.
  const CandidateMemory verdict = judge_candidate_memory(
      {"draft_n_max"}, filled_budget(-13 * static_cast<std::int64_t>(kMiB)), "draft_n_max 5");
  ASSERT_EQ(verdict.verdict, MemoryVerdict::lower_cache);
  EXPECT_EQ(verdict.cache_ram_mib, 1024 - 13);
  EXPECT_TRUE(testing::contains(verdict.text, "runs with --cache-ram 1011 instead of 1024"))
      << verdict.text;
  EXPECT_TRUE(testing::contains(verdict.text, "13.0 MiB short")) << verdict.text;
  // Short by a part of a MiB: rounded down, never above what fits.
  const CandidateMemory part =
      judge_candidate_memory({"ubatch"}, filled_budget(-100), "ubatch 1024");
  EXPECT_EQ(part.cache_ram_mib, 1023);
}

TEST(CandidateMemory, ARefusalSaysWhatTheCandidateWouldNeed) {
  // 1 GiB of prompt cache cannot make up for 1.5 GiB.
  const CandidateMemory verdict = judge_candidate_memory(
      {"ubatch"}, filled_budget(-static_cast<std::int64_t>(3 * kGiB / 2)), "ubatch 2048");
  ASSERT_EQ(verdict.verdict, MemoryVerdict::refused);
  const std::string& text = verdict.text;
  EXPECT_TRUE(testing::contains(text, "ubatch 2048 does not fit in memory (ubatch changed)"))
      << text;
  EXPECT_TRUE(testing::contains(text, "even with its prompt cache off")) << text;
  EXPECT_TRUE(testing::contains(text, "512.0 MiB more than the 10.0 GiB it may use")) << text;
  // MemAvailable is what may be used + the reserve − what the running server gives back.
  EXPECT_TRUE(
      testing::contains(text, "MemAvailable 11.0 GiB now + 3.0 GiB the running server gives back"))
      << text;
  EXPECT_TRUE(testing::contains(text, "it would fit with 512.0 MiB more memory available")) << text;
  EXPECT_TRUE(testing::contains(text, "--reserve 3.5 GiB")) << text;
  EXPECT_TRUE(testing::contains(text, "What fits: 1 slot(s)")) << text;
}

TEST(CandidateMemory, AGpuThatIsShortIsRefusedWithLaunchsOwnSentence) {
  CandidatePlanFigures p = filled_budget(100 * kMiB);
  p.fits = false;  // the host part fits; a discrete GPU's does not
  p.refusal = "the plan does not fit in memory; nothing was started. CUDA0 is short by 1 GiB";
  const CandidateMemory verdict = judge_candidate_memory({"ubatch"}, p, "ubatch 2048");
  ASSERT_EQ(verdict.verdict, MemoryVerdict::refused);
  EXPECT_TRUE(testing::contains(verdict.text, "ubatch 2048 changes the memory plan (ubatch)"));
  EXPECT_TRUE(testing::contains(verdict.text, "CUDA0 is short by 1 GiB"));
}

TEST(CandidateMemory, StoppingTheServerFreesItsAnonymousSharedAndPageTablePagesNotItsFile) {
  // A CPU build's server after some requests: the KV cache, compute buffers and saved prompts
  // are anonymous pages; the weights are mapped from the model file.
  const auto memory = sys::parse_status_memory(
      "Name:\tllama-server\nVmHWM:\t 2100000 kB\nVmRSS:\t 2000000 kB\n"
      "RssAnon:\t  900000 kB\nRssFile:\t 1000000 kB\nRssShmem:\t  100000 kB\n"
      "VmPTE:\t    4096 kB\nVmSwap:\t       0 kB\n",
      "/proc/42/status");
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->vm_pte, 4096u * 1024);
  EXPECT_EQ(freed_when_stopped(*memory), (900000u + 100000u + 4096u) * 1024);
}

}  // namespace
}  // namespace gb10tune::tune
