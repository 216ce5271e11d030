#include "support/captured_header.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "gb10tune/gguf/ggml_type.hpp"
#include "gb10tune/gguf/gguf_file.hpp"
#include "gb10tune/plan/device_plan.hpp"
#include "gb10tune/util/text_file.hpp"
#include "support/test_context.hpp"

namespace gb10tune::testing {

nlohmann::json fixture_json(const std::string& relative) {
  const auto text = read_text_file(fixture(relative));
  EXPECT_TRUE(text) << "cannot read the fixture " << relative;
  return text ? nlohmann::json::parse(*text) : nlohmann::json::object();
}

GgufWriter captured_header(const nlohmann::json& description) {
  GgufWriter w;
  for (const auto& [key, value] : description.at("metadata").items()) {
    if (value.contains("string")) {
      w.add(key, gguf_string(value.at("string").get<std::string>()));
    } else if (value.contains("uint32")) {
      w.add(key, gguf_uint32(value.at("uint32").get<std::uint32_t>()));
    } else if (value.contains("float32")) {
      w.add(key, gguf_float32(value.at("float32").get<float>()));
    } else if (value.contains("bool")) {
      w.add(key, gguf_bool(value.at("bool").get<bool>()));
    } else if (value.contains("uint32_array")) {
      w.add(key, gguf_uint32_array(value.at("uint32_array").get<std::vector<std::uint32_t>>()));
    } else if (value.contains("bool_array")) {
      w.add(key, gguf_bool_array(value.at("bool_array").get<std::vector<bool>>()));
    } else if (value.contains("int32_array")) {
      w.add(key, gguf_int32_array(value.at("int32_array").get<std::vector<std::int32_t>>()));
    } else if (value.contains("float32_array")) {
      std::vector<GgufValueBytes> items;
      for (const auto& item : value.at("float32_array")) {
        items.push_back(gguf_float32(item.get<float>()));
      }
      w.add(key, gguf_array(gguf::ValueType::float32, items));
    } else {
      ADD_FAILURE() << key << ": value type not handled";
    }
  }
  for (const auto& tensor : description.at("tensors")) {
    std::optional<std::uint64_t> offset;
    if (tensor.size() > 3) {
      offset = tensor.at(3).get<std::uint64_t>();
    }
    w.tensor(tensor.at(0).get<std::string>(), tensor.at(1).get<std::vector<std::uint64_t>>(),
             tensor.at(2).get<std::uint32_t>(), offset);
  }
  return w;
}

plan::PlanConfig captured_plan_config(const nlohmann::json& config) {
  plan::PlanConfig out;
  out.ctx_total = config.at("ctx").get<std::uint64_t>();
  out.slots = config.at("slots").get<std::uint32_t>();
  out.kv_unified = config.at("kvu").get<bool>();
  out.flash_attention = config.at("fa").get<bool>();
  out.ubatch = config.at("ubatch").get<std::uint32_t>();
  out.cache_ram_bytes = 0;
  out.overhead_bytes = 0;
  if (config.value("backend", std::string("cpu")) == "cuda") {
    out.backend = plan::PlanBackend::cuda;
  }
  if (config.contains("ngl")) {
    out.gpu_layers = config.at("ngl").get<std::uint32_t>();
  }
  out.mtp = config.value("mtp", false);
  out.draft_n_max = config.value("draft_n_max", out.draft_n_max);
  for (const auto& [key, field] :
       {std::pair{"cache_k", &out.cache_k}, std::pair{"cache_v", &out.cache_v}}) {
    if (config.contains(key)) {
      const gguf::GgmlTypeInfo* type = gguf::ggml_type_from_name(config.at(key).get<std::string>());
      EXPECT_NE(type, nullptr) << key;
      if (type != nullptr) {
        *field = type->type;
      }
    }
  }
  return out;
}

std::map<std::string, model::ModelFacts> captured_models(const nlohmann::json& models) {
  TempDir dir;
  std::map<std::string, model::ModelFacts> out;
  for (const auto& [name, description] : models.items()) {
    GgufWriter w = captured_header(description);
    const auto path = dir.path() / (name + ".gguf");
    w.write(path);
    const auto file = gguf::read_gguf(path);
    EXPECT_TRUE(file) << name << ": " << (file ? "" : file.error().message);
    if (!file) {
      continue;
    }
    const auto facts = model::describe_model(*file);
    EXPECT_TRUE(facts) << name << ": " << (facts ? "" : facts.error().message);
    if (facts) {
      out.emplace(name, *facts);
    }
  }
  return out;
}

std::vector<CapturedPlan> plan_captured_runs(const nlohmann::json& fixture,
                                             const CapturedRunFilter& keep) {
  const auto models = captured_models(fixture.at("models"));
  std::vector<CapturedPlan> out;
  for (const nlohmann::json& run : fixture.at("runs")) {
    const model::ModelFacts& model = models.at(run.at("model").get<std::string>());
    if (keep && !keep(run, model)) {
      continue;
    }
    plan::PlanConfig config = captured_plan_config(run.at("config"));
    config.overhead_bytes = plan::kDefaultOverheadBytes;  // as launch plans: the margin counts
    plan::PlanBudget budget;
    budget.mem_available = 120ull << 30;
    if (config.backend == plan::PlanBackend::cuda) {
      budget.gpus.push_back(
          {"CUDA0", "NVIDIA H200", 143156ull << 20, plan::kDefaultGpuReserveBytes});
    }
    auto plan = plan::make_plan(model, config, budget);
    EXPECT_TRUE(plan) << run.at("name") << ": " << plan.error().message;
    if (plan) {
      out.push_back({run, *plan});
    }
  }
  return out;
}

}  // namespace gb10tune::testing
