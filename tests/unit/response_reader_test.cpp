// The HTTP response reader: lengths, chunks, bodies to the end of the connection, interim
// answers, bytes in any split, and the cap over everything received.
#include "gb10tune/http/response_reader.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gb10tune::http {
namespace {

// Feeds `bytes` in pieces of `piece` bytes; the first error, or success.
Status feed_in_pieces(ResponseReader& reader, std::string_view bytes, std::size_t piece) {
  for (std::size_t at = 0; at < bytes.size() && !reader.complete(); at += piece) {
    if (auto fed = reader.feed(bytes.substr(at, piece)); !fed) {
      return fed;
    }
  }
  return {};
}

// Reads `answer` fed a byte at a time, 7 at a time and whole: each must give `status` and
// `body`.
void expect_read_in_any_split(const std::string& answer, int status, const std::string& body) {
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, answer.size()}) {
    ResponseReader reader(1024);
    ASSERT_TRUE(feed_in_pieces(reader, answer, piece)) << piece;
    ASSERT_TRUE(reader.complete()) << piece;
    const HttpResponse response = reader.take();
    EXPECT_EQ(response.status, status) << piece;
    EXPECT_EQ(response.body, body) << piece;
  }
}

TEST(ResponseReader, ReadsABodyByItsLengthInAnySplit) {
  expect_read_in_any_split(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
      "{\"status\":\"ok\"}",
      200, "{\"status\":\"ok\"}");
  ResponseReader reader(1024);
  ASSERT_TRUE(
      reader.feed("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                  "Content-Type: text/html\r\nContent-Length: 0\r\n\r\n"));
  EXPECT_EQ(reader.take().content_type, "application/json");
}

TEST(ResponseReader, ReadsChunksWithExtensionsAndTrailers) {
  expect_read_in_any_split(
      "HTTP/1.1 503 Service Unavailable\r\ntransfer-encoding: gzip, Chunked\r\n\r\n"
      "5;name=x\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n",
      503, "hello, world");
}

TEST(ResponseReader, ABodyWithoutLengthRunsToTheEndOfTheConnection) {
  ResponseReader reader(1024);
  ASSERT_TRUE(reader.feed("HTTP/1.0 200 OK\nContent-Type: text/plain\n\nall of it"));
  EXPECT_FALSE(reader.complete());
  ASSERT_TRUE(reader.feed(", and more"));
  ASSERT_TRUE(reader.finish());
  ASSERT_TRUE(reader.complete());
  EXPECT_EQ(reader.take().body, "all of it, and more");
}

TEST(ResponseReader, SkipsInterimAnswersAndKnowsBodilessStatuses) {
  ResponseReader reader(1024);
  ASSERT_TRUE(reader.feed("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"));
  ASSERT_TRUE(reader.complete());
  const HttpResponse response = reader.take();
  EXPECT_EQ(response.status, 204);
  EXPECT_EQ(response.body, "");
}

TEST(ResponseReader, TheCapCountsHeadersAndBody) {
  const std::string headers = "HTTP/1.1 200 OK\r\nContent-Length: 60\r\n\r\n";
  ResponseReader fits(headers.size() + 60);
  ASSERT_TRUE(fits.feed(headers + std::string(60, 'x')));
  EXPECT_TRUE(fits.complete());

  ResponseReader over(headers.size() + 59);
  const Status status = over.feed(headers + std::string(60, 'x'));
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message, "exceeded " + std::to_string(headers.size() + 59) +
                                        " bytes (headers and body together)");
  EXPECT_FALSE(over.feed("more")) << "a failed reader stays failed";
}

TEST(ResponseReader, AnAnnouncedBodyOverTheCapIsRefusedBeforeItArrives) {
  ResponseReader reader(std::size_t{16} << 20);
  const Status status = reader.feed("HTTP/1.1 200 OK\r\nContent-Length: 536870912\r\n\r\n");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message, "exceeded 16 MiB (it announced a body of 536870912 bytes)");

  ResponseReader chunked(64 * 1024);
  const Status chunk =
      chunked.feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\n");
  ASSERT_FALSE(chunk);
  EXPECT_EQ(chunk.error().message,
            "exceeded 64 KiB (it announced a chunk of 281474976710655 bytes)");
}

TEST(ResponseReader, RefusesWhatIsNotHttp) {
  const std::pair<const char*, const char*> cases[] = {
      {"SSH-2.0-OpenSSH_9.2\r\n", "is not HTTP: it begins 'SSH-2.0-OpenSSH_9.2'"},
      {"HTTP/1.1 2000 OK\r\n", "is not HTTP: it begins 'HTTP/1.1 2000 OK'"},
      {"HTTP/1.1 099 Low\r\n", "is not HTTP: it begins 'HTTP/1.1 099 Low'"},
      {"HTTP/1.1 200 OK\r\nno colon here\r\n", "is not HTTP: a header line reads 'no colon here'"},
      {"HTTP/1.1 200 OK\r\n folded: x\r\n", "is not HTTP: a header line reads ' folded: x'"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n", "is not HTTP: Content-Length '-5'"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n",
       "is not HTTP: Content-Length '6'"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
       "is not HTTP: a chunk size reads 'xyz'"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
       "is not HTTP: a chunk runs past its size ('c')"},
  };
  for (const auto& [bytes, why] : cases) {
    ResponseReader reader(1024);
    const Status status = reader.feed(bytes);
    ASSERT_FALSE(status) << bytes;
    EXPECT_EQ(status.error().message, why) << bytes;
  }
}

TEST(ResponseReader, AnAnswerCutShortIsNamedAsSuch) {
  const std::pair<const char*, const char*> cases[] = {
      {"HTTP/1.1 200 OK\r\nContent-",
       "ended early: the connection closed after 25 bytes, in its headers"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
       "ended early: the connection closed after 42 bytes, with 7 body bytes still to come"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
       "ended early: the connection closed after 55 bytes, before its last chunk"},
  };
  for (const auto& [bytes, why] : cases) {
    ResponseReader reader(1024);
    ASSERT_TRUE(reader.feed(bytes)) << bytes;
    const Status finished = reader.finish();
    ASSERT_FALSE(finished) << bytes;
    EXPECT_EQ(finished.error().message, why) << bytes;
  }
}

}  // namespace
}  // namespace gb10tune::http
