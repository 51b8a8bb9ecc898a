#include "engine/compress/SparseCodec.h"

#include "engine/compress/Codec.h"
#include "engine/compress/IndexTensors.h"
#include "engine/compress/TensorKernels.h"
#include "engine/compress/ValueCoding.h"

#include "engine/kernels/BitPack.h"
#include "engine/kernels/GroupStats.h"
#include "engine/kernels/Indices.h"
#include "engine/kernels/KernelError.h"
#include "engine/kernels/Random.h"
#include "engine/kernels/Threshold.h"
#include "engine/kernels/TopK.h"
#include "engine/tensors/DeviceChecks.h"

#include <torch/torch.h>

#include <cmath>

namespace ps {
namespace {

class SparseCodec final : public Codec {
 public:
  enum class Kind : uint8_t { TopK = 0, GaussianK = 1, SampledK = 2, RandK = 3 };
  // `name` and `id`: the entry's method name and payload id.
  SparseCodec(Kind kind, std::string name, CodecId id, const CompressionOptions& o, const CodecContext& c);
  std::string describe() const override;
  double omega(c10::IntArrayRef shape) const override;

 private:
  void encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) override;
  torch::Tensor decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) override;
  // TopK checks only what it selected: any inf or NaN in the input would be among it.
  bool findsNonFinite() const override { return kind_ == Kind::TopK; }
  // Every selector runs on a GPU (TensorKernels); only the selection comes to the host.
  bool encodesOnDevice() const override { return true; }
  // The selectors with indices on the wire keep their index and value blocks on the device (Payload::tail), for
  // values in float32, fp16 or the device's quantizer; RandK draws its positions on the host and sends them there.
  bool keepsTails() const override;
  void encodeTail(const TensorKernels& x, uint64_t k, uint64_t seed, const torch::Tensor& input, Payload& p,
                  ByteWriter& w);
  torch::Tensor decodeTail(uint64_t count, uint64_t n, ByteReader& r, const torch::Device& device);
  void selectRandom(uint64_t n, uint64_t k, uint64_t seed);  // fills indices_ ascending
  // GaussianK or the sampled threshold: fill indices_ and picked_, return how many were kept.
  uint64_t selectAboveThreshold(const TensorKernels& x, uint64_t k, uint64_t seed);
  float sampleThresholdOf(const TensorKernels& x, uint64_t seed);
  // The selection's kind, count and index block (its byte length first).
  void writeIndices(uint64_t count, uint64_t n, Payload& p, ByteWriter& w);

  Kind kind_;
  std::string name_;
  double K_, sample_;
  bool trim_, scaled_;
  ValueFormat values_;
  uint64_t stream_, messages_ = 0;
  std::vector<uint32_t> indices_, trimmed_;
  std::vector<float> picked_, scratch_;
  std::vector<uint8_t> bitmap_;
};


SparseCodec::SparseCodec(Kind kind, std::string name, CodecId id, const CompressionOptions& o, const CodecContext& c)
    : Codec(id), kind_(kind), name_(std::move(name)), K_(o.k), sample_(o.sample), trim_(o.trim), scaled_(o.scaled), stream_(c.stream()) {
  values_.bits = o.value_bits;
  values_.stochastic = o.rounding == "stochastic";
  values_.minmax = o.range == "minmax";
  values_.group = uint64_t(o.bucket);
}

std::string SparseCodec::describe() const {
  char k[32];
  std::snprintf(k, sizeof k, "%g%%", 100 * K_);
  std::string s = name_ + " " + k;
  if (values_.bits != 32) s += " " + std::to_string(values_.bits) + "-bit values";
  return s;
}

double SparseCodec::omega(c10::IntArrayRef shape) const {
  if (kind_ != Kind::RandK || !scaled_) return -1;
  const uint64_t n = uint64_t(std::max<int64_t>(1, c10::multiply_integers(shape))), k = sparseKeep(K_, n);
  const double randk = double(n) / double(k) - 1;  // unbiased RandK: omega = n/k - 1
  // Its k values quantized again: E|Q(R(x)) - x|^2 = E|Q(R(x)) - R(x)|^2 + E|R(x) - x|^2
  //   <= omega_Q E|R(x)|^2 + omega_R |x|^2 = (omega_Q (1 + omega_R) + omega_R) |x|^2.
  const double values = quantizerOmega(values_, std::min<uint64_t>(values_.group, k));
  return values < 0 ? -1 : (1 + randk) * (1 + values) - 1;
}

void SparseCodec::selectRandom(uint64_t n, uint64_t k, uint64_t seed) {
  // Mark k distinct positions (or the n - k left out, whichever is fewer), then read them in order.
  std::mt19937_64 g(seed);
  const bool exclude = k > n / 2;
  const uint64_t draws = exclude ? n - k : k;
  bitmap_.assign((n + 7) / 8, exclude ? 0xff : 0x00);
  for (uint64_t marked = 0; marked < draws;) {
    const uint64_t i = kernels::uniformBelow(g, n);
    const uint8_t bit = uint8_t(1u << (i & 7));
    if (bool(bitmap_[i >> 3] & bit) == exclude) {
      bitmap_[i >> 3] ^= bit;
      ++marked;
    }
  }
  indices_.resize(k);
  kernels::setBitPositions(bitmap_.data(), n, indices_.data());  // exactly k bits are set below n
}

void SparseCodec::encodeBody(const torch::Tensor& x, Payload& p, ByteWriter& w) {
  const uint64_t n = uint64_t(x.numel());
  if (n > 0xffffffffULL) throw std::invalid_argument("sparse payloads address at most 2^32 elements");
  const TensorKernels data(x);
  const uint64_t k = sparseKeep(K_, n);
  const uint64_t seed = kernels::splitmix64(stream_ + messages_++);

  if (keepsTail(x)) return encodeTail(data, k, seed, x, p, w);
  uint64_t count = 0;
  if (kind_ == Kind::RandK) {
    selectRandom(n, k, seed);
    count = indices_.size();
    picked_.resize(count);
    data.at(indices_.data(), count, picked_.data());
    const float scale = scaled_ ? float(double(n) / double(count)) : 1.f;
    if (scale != 1.f)
      for (float& v : picked_) v *= scale;
    p.bytes.reserve(p.bytes.size() + 32 + 4 * count);
    w.put<uint32_t>(uint32_t(count));
    w.put<uint64_t>(seed);  // the receiver draws the same positions: no indices on the wire
  } else {
    if (kind_ == Kind::TopK) {
      indices_.resize(k);
      picked_.resize(k);
      count = data.topk(k, indices_.data(), picked_.data());
    } else {
      count = selectAboveThreshold(data, k, seed);
    }
    // An inf or NaN outranks every finite magnitude, so TopK selects one whenever x holds one.
    if (findsNonFinite()) requireOnHost(kernels::allFinite(picked_.data(), count), nonFiniteRefusal(x));
    writeIndices(count, n, p, w);
  }
  encodeValues(picked_.data(), count, values_, seed ^ 0xA5A5A5A5ULL, w);
  p.values = count;
}

bool SparseCodec::keepsTails() const {
  return kind_ != Kind::RandK && (values_.bits == 32 || values_.bits == 16 || encodesWhereItLives(values_));
}

void SparseCodec::encodeTail(const TensorKernels& x, uint64_t k, uint64_t seed, const torch::Tensor& input, Payload& p,
                             ByteWriter& w) {
  // The host path's selection, made where x is and left there.
  const uint64_t n = x.size();
  TensorKernels::Picked s;
  if (kind_ == Kind::TopK) {
    s = x.topkHere(k);
    requireAllFinite(s.values, nonFiniteRefusal(input));
  } else {
    s = kind_ == Kind::GaussianK ? x.gaussianHere(K_) : x.gatherAboveHere(sampleThresholdOf(x, seed));
    if ((trim_ && s.size() > k) || (kind_ == Kind::SampledK && 3 * s.size() > 4 * k)) {
      const auto best = TensorKernels(s.values.contiguous()).topkHere(k);
      s = {s.positions.index_select(0, best.indices()), best.values};
    }
  }
  const uint64_t count = s.size();
  const IndexTensorBlock block = encodeIndexTensor(s.indices(), n);
  w.put<uint8_t>(uint8_t(kind_));
  w.put<uint32_t>(uint32_t(count));
  w.put<uint32_t>(uint32_t(1 + block.payload.numel()));
  w.put<uint8_t>(uint8_t(block.format));
  // The value block: its fields on the host, then the values or codes where they are.
  std::vector<uint8_t> fields;
  ByteWriter f(fields);
  const auto values = s.values.contiguous();
  torch::Tensor data;
  if (values_.bits == 32) {
    f.put<uint8_t>(32);
    data = values.view(torch::kUInt8);
  } else if (values_.bits == 16) {
    f.put<uint8_t>(16);
    data = halvesHere(values, false).view(torch::kUInt8);
  } else {
    encodeValues(TensorKernels(values), values_, seed ^ 0xA5A5A5A5ULL, f, &data);
  }
  const auto onDevice = torch::from_blob(fields.data(), {int64_t(fields.size())}, torch::kUInt8).to(values.device());
  p.tail = torch::cat({block.payload, onDevice.is_cpu() ? onDevice.clone() : onDevice, data});
  p.values = count;
}

torch::Tensor SparseCodec::decodeTail(uint64_t count, uint64_t n, ByteReader& r, const torch::Device& device) {
  const uint32_t length = r.get<uint32_t>("index block length");
  const uint8_t format = r.get<uint8_t>("index format");
  if (length < 1 || format > 2) throw PayloadError("an index block of length 0 or unknown format");
  const auto tail = this->tail().to(device);  // a peer copy when another GPU encoded it
  const int64_t indexBytes = int64_t(length) - 1, size = tail.numel();
  if (indexBytes >= size) throw PayloadError("the tail ends inside its index block");
  const auto idx = decodeIndexTensor(kernels::IndexFormat(format), tail.narrow(0, 0, indexBytes), count, n);
  const auto block = tail.narrow(0, indexBytes, size - indexBytes);
  const int bits = block[0].item<uint8_t>();
  torch::Tensor values;
  if (bits == 32 || bits == 16) {
    if (block.numel() != 1 + int64_t(count) * (bits / 8))
      throw PayloadError("a value block of " + std::to_string(block.numel()) + " bytes for " + std::to_string(count) +
                         " values");
    values = block.narrow(0, 1, block.numel() - 1).clone();  // aligned for the float view
    values = bits == 32 ? values.view(torch::kFloat32) : values.view(torch::kHalf).to(torch::kFloat32);
    requireAllFinite(values, nonFiniteValue());
  } else {
    if (bits < 1 || bits > 8) throw PayloadError("value width " + std::to_string(bits) + " bits");
    const int64_t codesBytes = int64_t(kernels::packedBytes(count, bits));
    if (codesBytes >= block.numel()) throw PayloadError("a value block without room for its codes");
    const auto head = block.narrow(0, 0, block.numel() - codesBytes).to(torch::kCPU).contiguous();
    const std::vector<uint8_t> fields(head.data_ptr<uint8_t>(), head.data_ptr<uint8_t>() + head.numel());
    ByteReader fr(fields, 0);
    const auto codes = block.narrow(0, block.numel() - codesBytes, codesBytes);
    const ValueBlock b = readValues(fr, count, &codes);
    fr.expectEnd();
    if (codes.is_cpu()) {
      values = torch::empty({int64_t(count)}, torch::kFloat32);
      decodeValues(b, count, values.data_ptr<float>());
    } else {
      if (b.minmax) throw PayloadError("codes in a tail are symmetric codes");
      values = dequantizeOnDevice({int64_t(count)}, device, codes, b.bits, b.group, b.lo.data());
    }
  }
  auto out = torch::zeros({int64_t(n)}, torch::TensorOptions(torch::kFloat32).device(device));
  if (count) out.index_copy_(0, idx, values);
  return out;
}

float SparseCodec::sampleThresholdOf(const TensorKernels& x, uint64_t seed) {
  if (x.onHost()) return kernels::sampledThreshold(x.host(), x.size(), K_, sample_, seed);
  // On a GPU: the same positions drawn here, their values fetched, the same k-th largest of the sample.
  kernels::samplePositions(x.size(), sample_, seed, trimmed_);
  scratch_.resize(trimmed_.size());
  x.at(trimmed_.data(), trimmed_.size(), scratch_.data());
  return kernels::sampleThreshold(scratch_.data(), scratch_.size(), x.size(), K_);
}

uint64_t SparseCodec::selectAboveThreshold(const TensorKernels& x, uint64_t k, uint64_t seed) {
  const uint64_t n = x.size();
  float t = 0;
  uint64_t count = 0;
  bool gathered = false;
  if (kind_ == Kind::GaussianK && x.onHost()) {
    // Gathered while the threshold is searched; room for 4k/3 (the accepted band) covers the usual case.
    const size_t room = std::max<size_t>(indices_.size(), std::min<uint64_t>(n, (4 * k + 2) / 3 + 1));
    indices_.resize(room);
    picked_.resize(room);
    count = kernels::gaussianGather(x.host(), n, K_, indices_.data(), picked_.data(), room, &t);
    gathered = count <= room;
  } else if (kind_ == Kind::GaussianK) {  // on a GPU: the same search run there, one read for its count
    const TensorKernels::Picked s = x.gaussianHere(K_);
    count = s.size();
    indices_.resize(count);
    picked_.resize(count);
    if (count) {
      torch::from_blob(indices_.data(), {int64_t(count)}, torch::kInt32).copy_(s.positions);
      torch::from_blob(picked_.data(), {int64_t(count)}, torch::kFloat32).copy_(s.values);
    }
    gathered = true;
  } else {
    t = sampleThresholdOf(x, seed);
  }
  if (!gathered) count = x.gatherAbove(t, indices_, picked_);
  // Exact trim to the k largest among the survivors: when asked for, and always for the sampled threshold
  // once more than 4k/3 survive, as DGC does (a small sample can set the threshold far too low).
  if ((trim_ && count > k) || (kind_ == Kind::SampledK && 3 * count > 4 * k)) {
    trimmed_.resize(k);
    scratch_.resize(k);
    kernels::topkSelect(picked_.data(), count, k, trimmed_.data(), scratch_.data());
    for (uint64_t i = 0; i < k; ++i) trimmed_[i] = indices_[trimmed_[i]];
    indices_.assign(trimmed_.begin(), trimmed_.end());
    picked_.assign(scratch_.begin(), scratch_.end());
    count = k;
  }
  return count;
}

void SparseCodec::writeIndices(uint64_t count, uint64_t n, Payload& p, ByteWriter& w) {
  // Room for the largest the rest can take (index block at most 4 bytes an index or n/8, float32 values), so
  // the payload is written without reallocating.
  p.bytes.reserve(p.bytes.size() + 32 + std::min<uint64_t>(4 * count, (n + 7) / 8) + 4 * count);
  w.put<uint8_t>(uint8_t(kind_));
  w.put<uint32_t>(uint32_t(count));
  // The index block's length first, so the decoder hands the index decoder exactly its bytes.
  const size_t at = p.bytes.size();
  w.put<uint32_t>(0);
  const uint32_t length = uint32_t(kernels::encodeIndices(indices_.data(), count, n, p.bytes));
  std::memcpy(p.bytes.data() + at, &length, 4);
}

torch::Tensor SparseCodec::decodeBody(const PayloadHeader& h, ByteReader& r, const torch::Device& device) {
  const bool randk = kind_ == Kind::RandK;
  const uint64_t n = uint64_t(h.numel());
  if (n > 0xffffffffULL) throw PayloadError("a sparse payload addresses at most 2^32 elements");
  uint64_t count = 0;
  if (randk) {
    count = r.get<uint32_t>("count");
    const uint64_t seed = r.get<uint64_t>("seed");
    if (count > n) throw PayloadError("count " + std::to_string(count) + " exceeds the " + std::to_string(n) + " elements");
    if (count > 8 * r.remaining()) throw PayloadError("count " + std::to_string(count) + " needs more value bytes than sent");
    selectRandom(n, count, seed);
  } else {
    const uint8_t kind = r.get<uint8_t>("selector");
    if (kind > 2) throw PayloadError("unknown sparse selector " + std::to_string(kind));
    count = r.get<uint32_t>("count");
    if (count > n) throw PayloadError("count " + std::to_string(count) + " exceeds the " + std::to_string(n) + " elements");
    // Every value takes at least one bit: a count the bytes cannot hold is refused before anything is allocated.
    if (tail().defined()) return decodeTail(count, n, r, device).view(h.shape);
    if (count > 8 * r.remaining()) throw PayloadError("count " + std::to_string(count) + " needs more bytes than sent");
    indices_.resize(count);
    const uint32_t length = r.get<uint32_t>("index block length");
    kernels::decodeIndices(r.take(length, "indices"), length, count, n, indices_.data());
  }
  picked_.resize(count);
  decodeValues(r, count, picked_.data());
  // On a GPU the selection is scattered there: only it crosses PCIe, not the dense tensor.
  if (decodesOnDevice(device)) return scatterOnDevice(h.shape, device, indices_.data(), picked_.data(), count);
  auto out = outputTensor(h.shape);
  float* o = out.data_ptr<float>();
  if (randk) {  // RandK's indices come from its seed, in draw order
    std::fill(o, o + n, 0.f);
    for (uint64_t i = 0; i < count; ++i) o[indices_[i]] = picked_[i];
  } else {  // ascending (checked by decodeIndices): zeros and values in one streaming pass
    kernels::scatterSorted(indices_.data(), picked_.data(), count, o, n);
  }
  return out;
}

template <class Entry>
std::unique_ptr<Codec> makeSparse(SparseCodec::Kind kind, const CompressionOptions& o, const CodecContext& c) {
  return std::make_unique<SparseCodec>(kind, Entry::spec().name, payloadOf<Entry>(), o, c);
}

}  // namespace

std::unique_ptr<Codec> TopKEntry::make(const CompressionOptions& o, const CodecContext& c) {
  return makeSparse<TopKEntry>(SparseCodec::Kind::TopK, o, c);
}
std::unique_ptr<Codec> RandKEntry::make(const CompressionOptions& o, const CodecContext& c) {
  return makeSparse<RandKEntry>(SparseCodec::Kind::RandK, o, c);
}
std::unique_ptr<Codec> GaussianKEntry::make(const CompressionOptions& o, const CodecContext& c) {
  return makeSparse<GaussianKEntry>(SparseCodec::Kind::GaussianK, o, c);
}
std::unique_ptr<Codec> SampledKEntry::make(const CompressionOptions& o, const CodecContext& c) {
  return makeSparse<SampledKEntry>(SparseCodec::Kind::SampledK, o, c);
}

}  // namespace ps
