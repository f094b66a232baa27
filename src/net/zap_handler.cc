#include "net/zap_handler.h"

#include <cstdio>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "net/transport.h"
#include "tessera/base/error.h"

namespace tessera::net {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";

class ZapHandler {
 public:
  ZapHandler() : socket_(zmq_context(), zmq::socket_type::rep) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind(kZapEndpoint);  // before any server socket binds: libzmq asks at once
    std::thread([this] { serve(); }).detach();  // lives as long as the process's context
  }

  void accept(const Security& security, const std::string& who) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint8_t binary[32];
    if (zmq_z85_decode(binary, security.keys.public_key.c_str()) == nullptr)
      fail("the job's public key is not Z85 text");
    curve_keys_.insert(std::string(reinterpret_cast<const char*>(binary), sizeof binary));
    tokens_.insert(security.keys.token);
    if (who_.empty()) who_ = who;
  }

 private:
  void serve() {
    while (true) {
      std::vector<zmq::message_t> request;
      try {
        if (!zmq::recv_multipart(socket_, std::back_inserter(request))) continue;
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        return;  // the context is going away with the process
      }
      const bool ok = request.size() >= 6 && allowed(request);
      if (!ok) log_refusal(request);
      std::vector<zmq::message_t> reply;
      reply.emplace_back(std::string("1.0"));
      reply.emplace_back(request.size() > 1 ? request[1].to_string() : std::string());
      reply.emplace_back(std::string(ok ? "200" : "400"));
      reply.emplace_back(std::string(ok ? "OK" : "not a key of this job"));
      reply.emplace_back(std::string(ok ? "job" : ""));
      reply.emplace_back();
      try {
        zmq::send_multipart(socket_, reply);
      } catch (const zmq::error_t&) {
        return;
      }
    }
  }

  bool allowed(const std::vector<zmq::message_t>& request) {
    const std::string mechanism = request[5].to_string();
    std::lock_guard<std::mutex> lock(mutex_);
    if (mechanism == "CURVE") return request.size() == 7 && curve_keys_.count(request[6].to_string()) > 0;
    if (mechanism == "PLAIN") return request.size() == 8 && tokens_.count(request[7].to_string()) > 0;
    return false;
  }

  void log_refusal(const std::vector<zmq::message_t>& request) {
    const std::string address = request.size() > 3 ? request[3].to_string() : "?";
    const std::string mechanism = request.size() > 5 ? request[5].to_string() : "?";
    std::lock_guard<std::mutex> lock(mutex_);
    if (!refused_.insert(address).second) return;
    std::fprintf(stderr, "%s\n",
                 fmt::format("{}: refused a connection from {} ({} with a key that is not this job's)",
                             who_.empty() ? "server" : who_, address, mechanism)
                     .c_str());
  }

  zmq::socket_t socket_;
  std::mutex mutex_;
  std::set<std::string> curve_keys_;  // 32-byte binary public keys
  std::set<std::string> tokens_;
  std::set<std::string> refused_;  // addresses already logged
  std::string who_;
};

}  // namespace

void accept_job_keys(const Security& security, const std::string& who) {
  static ZapHandler* handler = new ZapHandler();  // leaked with the context it serves
  handler->accept(security, who);
}

}  // namespace tessera::net
