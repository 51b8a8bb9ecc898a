#pragma once
// The sending end of a GraVAC-adapted link direction or gradient exchange (engine/compress/Adaptive.h): two
// persistent compressors with their own error-feedback residuals, one at theta_min and one at the candidate under
// exploration. Every message is compressed by both (each on its own residual-corrected input p = g + e), and what
// goes out is one of their two payloads or, when neither keeps enough of the signal, the tensor itself. The
// residual of the payload sent lives on; a move to another candidate retargets the current compressor, whose
// residual carries over, and theta_min's is never dropped. The receiver needs nothing of this: sparse payloads
// say how many values they carry, and a whole tensor decodes on any stateless receiver.
#include "engine/compress/AdaptiveSender.h"

#include <memory>

namespace ps {

class GravacCompressors : public AdaptiveSender {
 public:
  // `options`: the adapted sparsifier (method, value coding, theta_min). Starts sending theta_min's payload, with
  // the current compressor at theta_min too.
  GravacCompressors(const CompressionOptions& options, const CodecContext& context);

  // Between steps: whose payload to send and the current compressor's factor. Keeps both residuals.
  void select(GravacSend send, double current);
  void apply(const AdaptDecision& decision) override { select(decision.send, decision.explore); }
  GravacSend sends() const { return send_; }
  double sentK() const override;  // the factor of what is sent (1 when dense)

  // Sender thread: compresses with both, returns the payload selected and reports its error.
  Payload send(const torch::Tensor& x, const MessageMeta& meta, SendReport& report) override;
  // Adds the sums since the last call (sum ||g||, sum ||D(C(p))|| of each compressor) to `t` and starts over.
  void report(LinkTraffic& t) override;
  std::string describe() const override;

 private:
  CompressionOptions options_;
  std::unique_ptr<Compensator> min_, current_, dense_;
  double currentK_;
  GravacSend send_ = GravacSend::ThetaMin;
  double normRaw_ = 0, normMin_ = 0, normCurrent_ = 0;
};

}  // namespace ps
