#include "tessera/base/error.h"
#include "tessera/gen/generators.h"

namespace tessera {

Dataset generate(const GenOptions& o) {
  if (o.nodes < 0 || o.edges < 0) fail("--nodes and --edges must not be negative");
  if (o.nodes >= (int64_t{1} << 32)) fail("--nodes {} is too large: the generators support fewer than 2^32 nodes", o.nodes);
  Dataset d;
  if (o.kind == "rmat") d = generate_rmat(o);
  else if (o.kind == "products-like") d = generate_products_like(o);
  else if (o.kind == "mag-like") d = generate_mag_like(o);
  else if (o.kind == "kg") d = generate_kg(o);
  else fail("unknown generator '{}' (expected products-like, mag-like, kg or rmat)", o.kind);
  d.validate("generated " + o.kind);
  return d;
}

}  // namespace tessera
