# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/attack"
require "heron/attack/targets_file"

class TargetsFileTest < Minitest::Test
  TargetsFile = Heron::Attack::TargetsFile

  def load(text, **options)
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "order.json"), %({"item":1}))
      path = File.join(dir, "targets")
      File.write(path, text)
      yield TargetsFile.load(path, **options), path if block_given?
      TargetsFile.load(path, **options)
    end
  end

  def test_one_method_url_per_line_still_reads
    targets = load("# comment\nGET http://h/a\n\nHEAD http://h/b\n", body: "x")
    assert_equal %w[GET HEAD], targets.map(&:method)
    assert_equal "/b", targets.last.uri.path
    assert_equal [1, 1], targets.map(&:weight)
  end

  def test_headers_body_file_inline_body_and_weight
    post, put, get = load(<<~TARGETS, headers: ["X-Global: g", "Accept: */*"])
      POST http://h/orders weight=3
      Content-Type: application/json
      Accept: application/json
      @order.json

      PUT http://h/notes
      @@inline text body
      GET http://h/
    TARGETS
    assert_equal [3, 1, 1], [post, put, get].map(&:weight)
    assert_includes post.to_bytes, "X-Global: g\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 10\r\n\r\n{\"item\":1}"
    refute_includes post.to_bytes, "Accept: */*"
    assert put.to_bytes.end_with?("Accept: */*\r\nContent-Length: 16\r\n\r\ninline text body")
    assert_includes get.to_bytes, "X-Global: g\r\n"
    assert_equal 0, get.body_bytes
  end

  def test_command_line_body_for_targets_without_one
    with, without = load("POST http://h/a\n@@mine\nPOST http://h/b\n", body: "global")
    assert with.to_bytes.end_with?("\r\n\r\nmine")
    assert without.to_bytes.end_with?("\r\n\r\nglobal")
  end

  def test_errors_name_file_and_line
    {
      "X-A: 1\nGET http://h/\n" => /targets:1: expected 'METHOD URL'/,
      "GET http://h/\nnot a header\n" => /targets:2: expected 'Name: value'/,
      "GET http://h/ weight=0\n" => /targets:1: weight must be 1\.\.10000/,
      "GET http://h/ extra\n" => /targets:1: expected 'METHOD URL' or 'METHOD URL weight=N'/,
      "POST http://h/\n@missing.json\n" => /targets:2: cannot read body file: No such file/,
      "POST http://h/\n@@a\n@@b\n" => /targets:3: a target has two body lines/,
      "POST http://h/\n@@a\nX-A: 1\n" => /targets:3: a header after the body line/,
      "FETCH http://h/\n" => /targets:1: unknown method "FETCH"/,
      "GET ftp://h/\n" => /targets:1: not an http:\/\/ or https:\/\/ URL/,
      "# only a comment\n" => /has no targets/
    }.each do |text, message|
      error = assert_raises(Heron::Attack::UsageError, text) { load(text) }
      assert_match message, error.message, text
    end
  end

  def test_limits
    headers = (1..101).map { |i| "X-#{i}: v" }.join("\n")
    assert_raises(Heron::Attack::UsageError) { load("GET http://h/\n#{headers}\n") }
    error = assert_raises(Heron::Attack::UsageError) { load("GET http://h/\n" * 10_001) }
    assert_match(/more than 10000 targets/, error.message)
  end
end
