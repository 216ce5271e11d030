#include "gb10tune/launch/load_progress.hpp"

#include <gtest/gtest.h>

#include "support/test_context.hpp"

namespace gb10tune::launch {
namespace {

TEST(LoadProgress, TheRealLogAtDefaultVerbosityShowsItsStages) {
  const std::string log =
      testing::read_text(testing::fixture("llama-server/log-cpu-ngl99-default-3f545be.txt"));
  LoadLogReader reader;
  EXPECT_EQ(reader.progress().stage, LoadStage::starting);
  const std::size_t loading = log.find("load_model: loading model");
  reader.feed(log.substr(0, log.find('\n', loading) + 1));
  EXPECT_EQ(reader.progress().stage, LoadStage::loading_model);
  EXPECT_EQ(reader.progress().describe(), "loading model");
  const std::size_t slots = log.find("initializing, n_slots");
  reader.feed(log.substr(log.find('\n', loading) + 1, slots - log.find('\n', loading) - 1));
  reader.feed(log.substr(slots, log.find('\n', slots) + 1 - slots));
  EXPECT_EQ(reader.progress().stage, LoadStage::initializing_slots);
  reader.feed(log.substr(log.find('\n', slots) + 1));
  EXPECT_EQ(reader.progress().stage, LoadStage::loaded);
  EXPECT_EQ(reader.progress().describe(), "model loaded, waiting for /health");
}

TEST(LoadProgress, TheRealLogAtLevel4ShowsLayersAndWeights) {
  const std::string log =
      testing::read_text(testing::fixture("llama-server/log-cpu-ngl99-lv4-3f545be.txt"));
  LoadLogReader reader;
  reader.feed(log.substr(0, log.find("llama_context: constructing")));
  EXPECT_EQ(reader.progress().stage, LoadStage::loading_tensors);
  EXPECT_EQ(reader.progress().layers_offloaded, 4);
  EXPECT_EQ(reader.progress().layers_total, 4);
  EXPECT_EQ(reader.progress().weights_bytes, 576717u);  // 0.55 MiB
  EXPECT_EQ(reader.progress().describe(),
            "loading tensors (4/4 layers on the GPU, 563.2 KiB of weights)");
  reader.feed(
      log.substr(log.find("llama_context: constructing"),
                 log.find("warming up the model") - log.find("llama_context: constructing")));
  EXPECT_EQ(reader.progress().stage, LoadStage::creating_context);
  reader.feed(log.substr(log.find("warming up the model")));
  EXPECT_EQ(reader.progress().stage, LoadStage::loaded);
}

TEST(LoadProgress, ProgressDotsArePercentEvenSplitAcrossChunks) {
  LoadLogReader reader;
  reader.feed("I llama_model_loader: loaded meta data with 46 key-value pairs\n");
  reader.feed("....");
  reader.feed("...");
  EXPECT_EQ(reader.progress().stage, LoadStage::loading_tensors);
  EXPECT_EQ(reader.progress().percent, 7);
  EXPECT_EQ(reader.progress().describe(), "loading tensors 7%");
  reader.feed(std::string(93, '.') + "\n");
  EXPECT_EQ(reader.progress().percent, 100);
  // A path with dots or an ellipsis in a line is not progress.
  reader.feed("I load_model: loading model '/models/m.v2.gguf'...\n");
  EXPECT_EQ(reader.progress().percent, 100);
}

TEST(LoadProgress, ALineSplitAcrossChunksIsReadOnceWhole) {
  LoadLogReader reader;
  reader.feed("I srv  llama_server: model lo");
  EXPECT_EQ(reader.progress().stage, LoadStage::starting);
  reader.feed("aded\n");
  EXPECT_EQ(reader.progress().stage, LoadStage::loaded);
  // Stages never go back.
  reader.feed("I srv    load_model: loading model 'x'\n");
  EXPECT_EQ(reader.progress().stage, LoadStage::loaded);
}

}  // namespace
}  // namespace gb10tune::launch
