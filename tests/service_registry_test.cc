// The request registry: every part of the library claims its request types
// at load time, no type twice, and a second claim of a type is named.
#include <gtest/gtest.h>

#include "net/service_registry.h"
#include "tessera/base/error.h"

namespace tessera::testing {
namespace {

TEST(ServiceRegistry, EveryPartClaimsItsTypesAndNoTypeIsClaimedTwice) {
  EXPECT_NO_THROW(net::request_types().check());
  std::map<std::string, int> parts;
  for (const auto& [type, service] : net::request_types().owners()) {
    EXPECT_NE(type, net::kReply) << service;
    ++parts[service.substr(0, service.find(':'))];
  }
  // The partition servers' own parts, sampling, checkpoints and the rendezvous store.
  EXPECT_EQ(parts["store"], 5);
  EXPECT_EQ(parts["graph"], 5);  // in- and out-degrees, find edges, has edges, top in-degree
  EXPECT_EQ(parts["partition server"], 1);
  EXPECT_EQ(parts["sampling"], 1);
  EXPECT_EQ(parts["checkpoints"], 3);
  EXPECT_EQ(parts["rendezvous"], 6);
}

TEST(ServiceRegistry, ASecondClaimIsNamedAndTheFirstHandlerKept) {
  net::RequestTypes types;
  net::ServiceRegistry<int> registry(types);
  registry.add(7, "first", [](int& state, net::Request&, net::Header* reply) {
    reply->iarg = state;
    return net::Frames{};
  });
  EXPECT_NO_THROW(types.check());
  registry.add(7, "second", [](int&, net::Request&, net::Header* reply) {
    reply->iarg = -1;
    return net::Frames{};
  });
  registry.add(net::kReply, "impostor", [](int&, net::Request&, net::Header*) { return net::Frames{}; });
  try {
    types.check();
    FAIL() << "a type claimed twice passed the check";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("type 7 is claimed by first and by second"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("impostor claims type 1, the transport's reply"), std::string::npos)
        << e.what();
  }
  int state = 42;
  net::Request request;
  request.header.type = 7;
  net::Header reply;
  registry.dispatch(state, request, &reply);
  EXPECT_EQ(reply.iarg, 42);
  request.header.type = 8;
  EXPECT_THROW(registry.dispatch(state, request, &reply), net::ProtocolError);
}

}  // namespace
}  // namespace tessera::testing
