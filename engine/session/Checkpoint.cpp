#include "engine/session/Checkpoint.h"

#include "engine/core/AtomicFile.h"

#include <torch/torch.h>

#include <filesystem>

namespace ps {
namespace {

std::runtime_error checkpointError(const std::string& path, const std::string& what) {
  return std::runtime_error("checkpoint '" + path + "': " + what);
}

torch::serialize::InputArchive openArchive(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw checkpointError(path, "no such file; train with run.save_checkpoint=true first, or fix model.init_checkpoint");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    throw checkpointError(path, "not a PipeSqueeze checkpoint or damaged (" + std::string(e.what_without_backtrace()) + ")");
  }
  return archive;
}

// Archive keys may not contain dots.
std::string key(std::string name) {
  for (size_t at = name.find('.'); at != std::string::npos; at = name.find('.', at + 2)) name.replace(at, 1, "__");
  return name;
}

}  // namespace

void saveCheckpoint(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& parameters,
                    const std::string& vocab, const std::string& configJson) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  torch::serialize::OutputArchive archive;
  for (const auto& [name, tensor] : parameters) archive.write(key(name), tensor.detach().cpu());
  archive.write("meta_vocab", c10::IValue(vocab));
  archive.write("meta_config", c10::IValue(configJson));
  AtomicFile file(path);  // a crash never leaves half a checkpoint, and no planted link is written through
  archive.save_to(file.stream());
  file.commit();
}

std::string checkpointVocab(const std::string& path) {
  auto archive = openArchive(path);
  c10::IValue v;
  if (!archive.try_read("meta_vocab", v) || !v.isString()) return "";
  return v.toStringRef();
}

void loadCheckpoint(const std::string& path, BlockModel& model) {
  auto archive = openArchive(path);
  torch::NoGradGuard noGrad;
  for (size_t b = 0; b < model.size(); ++b) {
    for (const auto& item : model.blocks[b].ptr()->named_parameters()) {
      const std::string name = "b" + std::to_string(b) + "." + item.key();
      torch::Tensor stored;
      if (!archive.try_read(key(name), stored))
        throw checkpointError(path, "has no parameter " + name + "; it was saved from a different model "
                                    "(check model.width, model.depth, model.heads and task)");
      if (stored.sizes() != item.value().sizes())
        throw checkpointError(path, "parameter " + name + " has shape " + c10::str(stored.sizes()) +
                                        " but the model expects " + c10::str(item.value().sizes()));
      item.value().copy_(stored);
    }
  }
}

void loadCheckpoint(const std::string& path, const std::vector<std::shared_ptr<Bottleneck>>& bottlenecks) {
  bool any = false;
  for (const auto& b : bottlenecks) any = any || (b && b->init != "random");
  if (!any) return;  // nothing trained to restore: a fixed random projection is drawn again from the seed
  auto archive = openArchive(path);
  torch::NoGradGuard noGrad;
  for (const auto& b : bottlenecks) {
    if (!b || b->init == "random") continue;
    for (const auto& [half, module] :
         {std::pair{b->encoderName(), b->encoder}, std::pair{b->decoderName(), b->decoder}}) {
      const std::string name = half + ".weight";
      torch::Tensor stored;
      if (!archive.try_read(key(name), stored)) continue;
      if (stored.sizes() != module->weight().sizes())
        throw checkpointError(path, "parameter " + name + " has shape " + c10::str(stored.sizes()) +
                                        " but the bottleneck expects " + c10::str(module->weight().sizes()) +
                                        " (check compression.forward.code_width and the cuts)");
      module->weight().copy_(stored);
    }
  }
}

std::string checkpointPath(const Config::Run& run, const std::string& storePath, int64_t runId) {
  namespace fs = std::filesystem;
  const fs::path dir = !run.checkpoint_dir.empty() ? fs::path(run.checkpoint_dir)
                       : storePath.empty()         ? fs::path("checkpoints")
                                                   : fs::path(storePath).parent_path() / "checkpoints";
  const std::string name = run.checkpoint_file.empty() ? "run-" + std::to_string(runId) + ".pt" : run.checkpoint_file;
  return (dir / name).string();
}

}  // namespace ps
