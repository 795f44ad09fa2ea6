# frozen_string_literal: true

require "test_helper"
require "protocol/hpack"
require "heron/http2/decoder"

# Decoder#request: a request's header block read straight into its Rack env, in one C call,
# gives the env that decoding the block (Decoder#decode) and building from the fields
# (RequestFields.fill) gives; a malformed request is returned, not raised, its block still
# decoded whole (the table stays in step with the client's); a header list past its limits
# ends the connection.
class HeronHTTP2DecoderRequestTest < Minitest::Test
  def block(fields, context, table_size = nil)
    String.new(encoding: Encoding::BINARY).tap { |out| Protocol::HPACK::Compressor.new(out, context, table_size_limit: table_size).encode(fields) }
  end

  def filled(fields)
    env = {}
    error = Heron::HTTP2::RequestFields.fill(env, fields)
    error || env
  end

  def test_a_connection_of_requests_gives_the_env_decoded_fields_give
    %i[shorter never].each do |huffman|
      client = Protocol::HPACK::Context.new(huffman: huffman)
      straight = Heron::HTTP2::Decoder.new
      fields_way = Heron::HTTP2::Decoder.new
      300.times do |n|
        fields = [[":method", %w[GET POST PATCH][n % 3]], [":scheme", "https"], [":authority", "example.com"], [":path", "/item/#{n % 37}?page=#{n % 5}"],
                  ["x-trace-#{n % 11}", "t" * (n % 90)], ["cookie", "session=#{n % 7}"], ["cookie", "theme=dark"], ["accept", "*/*"]]
        data = block(fields, client, { 100 => 256, 200 => 4096 }[n])
        env = straight.request(data, 4096, 65_536, {})
        assert_equal filled(fields_way.decode(data, 4096)), env, "block #{n} (#{huffman})"
        assert_equal ["session=#{n % 7}; theme=dark", Encoding::BINARY], [env["HTTP_COOKIE"], env["PATH_INFO"].encoding]
        refute_predicate env["PATH_INFO"], :frozen?, "the app's to change"
      end
    end
  end

  # The request is refused (a stream error), but its field was added to the table and the
  # client's next block names it by index: decoding went on after the fault.
  def test_a_malformed_request_is_returned_and_its_block_still_decoded_whole
    client = Protocol::HPACK::Context.new(huffman: :never) # a byte from 0x80 up is an index
    decoder = Heron::HTTP2::Decoder.new
    bad = [[":method", "GET"], [":scheme", "http"], [":path", "/"], %w[connection close], ["x-after", "kept"]]
    error = decoder.request(block(bad, client), 4096, 65_536, {})
    assert_kind_of Heron::HTTP2::EnvBuilder::Malformed, error
    assert_match(/connection-specific field connection/, error.message)
    good = [[":method", "GET"], [":scheme", "http"], [":path", "/next"], ["x-after", "kept"]]
    data = block(good, client)
    assert_includes data.bytes, 0xbf, "x-after by its dynamic index (63: :path /next is added before)"
    env = decoder.request(data, 4096, 65_536, {})
    assert_equal ["/next", "kept"], env.values_at("PATH_INFO", "HTTP_X_AFTER")
    assert_kind_of Heron::HTTP2::EnvBuilder::InvalidTarget, decoder.request("\x82\x86\x04\x03/\xc0\xaf".b, 4096, 65_536, {})
  end

  # A repeated block of indexed fields gives a copy of the last env (its keys not hashed
  # again), with a PATH_INFO and QUERY_STRING of its own; a block that changes the table between
  # two such blocks makes the next one decode afresh; a joined cookie (a String of the request's
  # own) is never shared.
  def test_a_repeated_block_of_indexed_fields_gives_a_copy_of_the_last_env
    decoder = Heron::HTTP2::Decoder.new
    client = Protocol::HPACK::Context.new
    template = { "SERVER_PROTOCOL" => "HTTP/2" }.freeze
    decoder.request(block([[":method", "GET"], [":scheme", "http"], [":path", "/a?x=1"], [":authority", "first.example"]], client), 4096, 65_536, template)
    repeated = [0x82, 0x86, 0xbf, 0xbe].pack("C*") # :method GET, :scheme http, entry 63 (:path /a?x=1), 62 (:authority)
    first = decoder.request(repeated.dup, 4096, 65_536, template)
    first["PATH_INFO"] << "/changed"
    second = decoder.request(repeated.dup, 4096, 65_536, template)
    assert_equal ["GET", "/a", "x=1", "first.example", "HTTP/2"], second.values_at("REQUEST_METHOD", "PATH_INFO", "QUERY_STRING", "HTTP_HOST", "SERVER_PROTOCOL")
    refute_same first, second
    refute_predicate second["QUERY_STRING"], :frozen?
    decoder.request(block([[":method", "GET"], [":scheme", "http"], [":path", "/b"], [":authority", "second.example"]], client), 4096, 65_536, template)
    assert_equal ["/b", "second.example"], decoder.request(repeated.dup, 4096, 65_536, template).values_at("PATH_INFO", "HTTP_HOST")
    decoder.request(block([[":method", "GET"], [":scheme", "http"], [":path", "/"], %w[cookie a=1], %w[cookie b=2]], client), 4096, 65_536, template)
    crumbs = [0x82, 0x86, 0x84, 0xbf, 0xbe].pack("C*") # cookie a=1 (63), cookie b=2 (62)
    joined = Array.new(2) { decoder.request(crumbs.dup, 4096, 65_536, template)["HTTP_COOKIE"] }
    assert_equal ["a=1; b=2"] * 2, joined
    refute_same(*joined)
  end

  def test_a_header_list_past_its_limits_ends_the_connection
    decoder = Heron::HTTP2::Decoder.new
    big = block([[":method", "GET"], [":scheme", "http"], [":path", "/"], ["x-big", "a" * 2000]], Protocol::HPACK::Context.new)
    error = assert_raises(Protocol::HTTP2::ProtocolError) { decoder.request(big, 4096, 1024, {}) }
    assert_equal Protocol::HTTP2::ENHANCE_YOUR_CALM, error.code
    many = "\x82\x86\x84".b + ("\x93".b * Heron::HTTP2::Decoder::MAX_FIELDS) # accept (static 19, empty) again and again
    error = assert_raises(Protocol::HTTP2::ProtocolError) { decoder.decode(many, 4096, 65_536) }
    assert_equal Protocol::HTTP2::ENHANCE_YOUR_CALM, error.code
    assert_equal 3, decoder.decode("\x82\x86\x84".b, 4096, 1024).size
  end

  # A name's env key is built on the stack up to 123 bytes and in the heap past that: names
  # of every length across the switch give their keys (under ruby_asan, an overrun of the
  # stack buffer is reported).
  def test_field_names_around_the_stack_buffer_give_their_keys
    client = Protocol::HPACK::Context.new
    decoder = Heron::HTTP2::Decoder.new
    (100..160).each do |length|
      name = "x#{"-y" * length}"[0, length]
      env = decoder.request(block([[":method", "GET"], [":scheme", "http"], [":path", "/"], [name, "v"]], client), 4096, 65_536, {})
      assert_equal "v", env["HTTP_#{name.upcase.tr("-", "_")}"], "a #{length}-byte name"
    end
  end
end
