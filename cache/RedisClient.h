//===- RedisClient.h - Minimal RESP client for the remote cache -*- C++ -*-===//
//
// Just enough of the Redis protocol (RESP2 over TCP) for a shared compile
// cache: GET and SET of binary-safe values. A remote cache is an optimisation,
// so every failure (unreachable server, slow server, hostile or garbled reply)
// is reported as an error string within a bounded time and never as a crash,
// a hang, an exception, a SIGPIPE or an allocation sized by the peer.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CACHE_REDISCLIENT_H
#define CUVIL_CACHE_REDISCLIENT_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil::cache {

struct RedisEndpoint {
  std::string host;
  int port = 6379;
};

/// Parses "redis://HOST[:PORT][/]" (HOST a name or IPv4 address; PORT
/// defaults to 6379). Returns nullopt with `error` naming the text and what is
/// wrong otherwise; credentials, database numbers and IPv6 are not supported.
std::optional<RedisEndpoint> parseRedisUrl(const std::string &url, std::string &error);

/// One connection to a Redis server. Not thread-safe: use one per thread.
/// After a timeout, protocol error or lost connection the stream is out of
/// step with the server, so the client turns unusable and every later call
/// fails fast with an error naming the first failure; an error *reply* (e.g.
/// "-ERR ...") leaves it usable.
class RedisClient {
public:
  static constexpr std::chrono::milliseconds kDefaultCommandTimeout{5000};
  static constexpr size_t kDefaultMaxValueBytes = size_t(1) << 30;

  /// Resolves (getaddrinfo) and connects (non-blocking connect + poll),
  /// the two together bounded by `timeout`. nullptr with `error` on failure,
  /// e.g. "cannot reach redis://h:p: Connection refused".
  static std::unique_ptr<RedisClient>
  connect(const RedisEndpoint &endpoint, std::chrono::milliseconds timeout, std::string &error);

  RedisClient(const RedisClient &) = delete;
  RedisClient &operator=(const RedisClient &) = delete;
  ~RedisClient();

  /// GET key: true with `value` set to the bytes, or to nullopt when the key
  /// is absent. false with `error` on any failure (timeout, lost connection,
  /// protocol error, error reply, a value longer than maxValueBytes).
  bool get(const std::string &key, std::optional<std::string> &value, std::string &error);

  /// SET key value: true on "+OK", false with `error` otherwise.
  bool set(const std::string &key, const std::string &value, std::string &error);

  /// Bound on each command, sending it and reading its whole reply. Values
  /// below 1 ms are raised to 1 ms.
  void setCommandTimeout(std::chrono::milliseconds t);

  /// Longest bulk value accepted in a reply; a longer announced length is
  /// rejected before anything is allocated for it.
  void setMaxValueBytes(size_t n) { maxValueBytes_ = n; }

  /// "redis://HOST:PORT", the prefix of every error message.
  const std::string &name() const { return name_; }

private:
  enum class Expect { Ok, BulkOrNil };
  struct Deadline;

  RedisClient(int fd, std::string name);

  bool command(const char *verb, const std::vector<std::string_view> &args, Expect expect,
               std::optional<std::string> *bulk, std::string &error);
  bool sendAll(const std::vector<std::string_view> &pieces, const Deadline &deadline,
               std::string &why);
  bool receive(const Deadline &deadline, size_t &n, std::string &why);
  bool fill(const Deadline &deadline, std::string &why);
  bool readLine(const Deadline &deadline, size_t maxLen, std::string &line, std::string &why);
  bool readBulk(size_t len, const Deadline &deadline, std::string &out, std::string &why);
  bool readReply(Expect expect, const Deadline &deadline, std::optional<std::string> *bulk,
                 std::string &why, bool &fatal);
  void breakConnection(const std::string &why);

  int fd_;
  std::string name_;
  std::chrono::milliseconds commandTimeout_ = kDefaultCommandTimeout;
  size_t maxValueBytes_ = kDefaultMaxValueBytes;
  std::string broken_; // non-empty once the connection is unusable: the first failure
  std::string rbuf_;   // received, not yet consumed bytes start at rpos_
  size_t rpos_ = 0;
  std::unique_ptr<char[]> chunk_; // recv() scratch buffer
};

} // namespace cuvil::cache

#endif // CUVIL_CACHE_REDISCLIENT_H
