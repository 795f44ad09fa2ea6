# frozen_string_literal: true

require "test_helper"

# Whatever a client sends, the server answers with a well-formed response or closes, and keeps
# serving. Seeded random mutations of valid requests (bounded: 300 connections).
class MutatedRequestsTest < Minitest::Test
  SEEDS = [
    "GET /a?b=c HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
    "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.1\r\nHost: y\r\n\r\n",
  ].freeze
  BYTES = ["\r", "\n", "\0", " ", ":", "\t", "\x7f", "\xff", "-", "0", "f", ";", "\r\n", "\r\n\r\n"].map(&:b).freeze

  def mutate(random, request)
    data = request.b.dup
    random.rand(1..4).times do
      at = random.rand(data.bytesize)
      case random.rand(3)
      when 0 then data.insert(at, BYTES.sample(random: random))
      when 1 then data.slice!(at, random.rand(1..3))
      else data[at] = BYTES.sample(random: random)
      end
    end
    data
  end

  def test_random_mutations_never_break_the_server
    app = ->(env) { [200, { "content-type" => "text/plain" }, [env["rack.input"].read.bytesize.to_s]] }
    random = Random.new(Integer(ENV.fetch("MUTATION_SEED", "20261122")))
    with_server(app, header_timeout: 0.5, first_byte_timeout: 0.5, body_timeout: 0.5, keepalive_timeout: 0.5) do |port|
      300.times do
        response = raw_request(port, mutate(random, SEEDS.sample(random: random)), timeout: 3)
        assert(response.empty? || response.match?(/\AHTTP\/1\.1 \d{3} /), response[0, 60].inspect)
      end
      ok = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_match(/\AHTTP\/1.1 200 OK/, ok)
      refute_match(/app error/, server_log, "no mutation reached the app as an exception")
    end
  end
end
