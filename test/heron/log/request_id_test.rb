# frozen_string_literal: true

require "test_helper"
require "heron/log/request_id"

class HeronLogRequestIdTest < Minitest::Test
  RequestId = Heron::Log::RequestId

  def test_a_sane_client_id_is_kept
    env = { "HTTP_X_REQUEST_ID" => "abc-123_DEF@9" }
    assert_equal "abc-123_DEF@9", RequestId.assign(env)
    assert_equal "abc-123_DEF@9", env["heron.request_id"]
  end

  def test_anything_else_gets_a_new_one
    ["", "a b", "x" * 129, "id\"quote", "caf\u00e9", "<script>", "a.b", "a/b:c"].each do |given|
      env = { "HTTP_X_REQUEST_ID" => given }
      id = RequestId.assign(env)
      refute_equal given, id
      assert_match RequestId::SANE, id
      assert_equal [id, id], env.values_at("HTTP_X_REQUEST_ID", "heron.request_id")
    end
  end

  def test_new_ids_are_unique_across_threads_and_forks
    ids = 4.times.map { Thread.new { Array.new(500) { RequestId.generate } } }.flat_map(&:value)
    reader, writer = IO.pipe
    pid = fork { reader.close; writer.write(RequestId.generate); writer.close; exit!(0) } # exit!: no at_exit (minitest would run again)
    writer.close
    ids << reader.read
    Process.wait(pid)
    assert_equal ids.size, ids.uniq.size
    refute_equal ids.first.split("-").first, ids.last.split("-").first, "a forked child draws its own prefix"
  end

  def test_echo_adds_the_header_unless_the_app_set_one
    env = { "heron.request_id" => "r-1" }
    response = [200, {}, []]
    assert_same response, RequestId.echo(response, env)
    assert_equal({ "x-request-id" => "r-1" }, response[1])
    assert_equal({ "x-request-id" => "app" }, RequestId.echo([200, { "x-request-id" => "app" }, []], env)[1])
    frozen = {}.freeze
    copied = RequestId.echo([200, frozen, []], env)
    assert_equal [{ "x-request-id" => "r-1" }, {}], [copied[1], frozen]
    assert_equal :odd, RequestId.echo(:odd, env)
  end
end
