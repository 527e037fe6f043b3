// libFuzzer target for resource.Quantity parsing and arithmetic. A parsed
// quantity's canonical form must parse back to an equal quantity. The form
// itself may change once (as upstream: "62.5Ki" prints as "64000", which
// reads back as a decimal quantity, "64k"), and is stable from then on.
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/api/quantity.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gantry::api::Quantity;
  using gantry::fuzz::PropertyFailed;
  absl::StatusOr<Quantity> q = Quantity::Parse(gantry::fuzz::AsText(data, size));
  if (!q.ok()) return 0;
  const std::string text = q->ToString();
  absl::StatusOr<Quantity> again = Quantity::Parse(text);
  if (!again.ok()) PropertyFailed("canonical form does not parse");
  if (again->Compare(*q) != 0) PropertyFailed("canonical form changes the value");
  const std::string text2 = again->ToString();
  absl::StatusOr<Quantity> third = Quantity::Parse(text2);
  if (!third.ok() || third->Compare(*q) != 0) PropertyFailed("second form changes the value");
  if (third->ToString() != text2) PropertyFailed("canonical form is not stable");
  (void)q->Value();
  (void)q->MilliValue();
  (void)q->AsInt64();
  (void)q->AsApproximateFloat();
  (void)q->IsInteger();
  if (absl::StatusOr<Quantity> sum = q->Add(*q); sum.ok()) {
    if (q->Sign() != 0 && sum->Compare(*q) != q->Sign()) PropertyFailed("q + q is not beyond q");
    absl::StatusOr<Quantity> back = sum->Sub(*q);
    if (back.ok() && back->Compare(*q) != 0) PropertyFailed("(q + q) - q != q");
  }
  if (absl::StatusOr<Quantity> zero = q->Sub(*q); zero.ok() && !zero->IsZero()) {
    PropertyFailed("q - q != 0");
  }
  return 0;
}
