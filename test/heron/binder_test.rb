# frozen_string_literal: true

require "test_helper"
require "tmpdir"

# Heron::Binder: the listening sockets named by bind URIs, opened for real.
class HeronBinderTest < Minitest::Test
  include EnvHelper
  Binder = Heron::Binder

  def setup
    @dir = Dir.mktmpdir("binder")
  end

  def teardown
    @binder&.close
    FileUtils.rm_rf(@dir)
  end

  def bind(*uris, **options)
    @binder = Binder.new(uris, **options)
    @binder.bind
  end

  def test_tcp_binds_listen_and_report_their_addresses
    listeners = bind("tcp://127.0.0.1:0", "tcp://[::1]:0")
    ports = Binder.ports(listeners)
    assert_equal 2, ports.size
    assert_equal ["http://127.0.0.1:#{ports[0]}", "http://[::1]:#{ports[1]}"], @binder.addresses
    TCPSocket.new("127.0.0.1", ports[0]).close # accepting connections
  end

  def test_a_unix_bind_makes_its_socket_file_and_close_removes_it
    path = File.join(@dir, "h.sock")
    bind("unix://#{path}")
    assert File.socket?(path)
    assert_equal ["unix://#{path}"], @binder.addresses
    UNIXSocket.new(path).close
    @binder.close
    refute File.exist?(path)
  end

  def test_a_stale_socket_file_is_replaced_and_a_live_one_is_not_taken
    path = File.join(@dir, "h.sock")
    UNIXServer.new(path).close # a crashed server's leftover: a file nobody listens on
    bind("unix://#{path}")
    assert File.socket?(path)
    error = assert_raises(Heron::BindError) { Binder.new(["unix://#{path}"]).bind }
    assert_match(/another server is using it/, error.message)
  end

  def test_an_address_in_use_is_a_bind_error_and_nothing_stays_open
    taken = TCPServer.new("127.0.0.1", 0)
    port = taken.addr[1]
    binder = Binder.new(["tcp://127.0.0.1:0", "tcp://127.0.0.1:#{port}"])
    error = assert_raises(Heron::BindError) { binder.bind }
    assert_match(/could not listen on tcp:\/\/127.0.0.1:#{port}/, error.message)
    assert_empty binder.listeners.reject(&:closed?)
  ensure
    taken&.close
  end

  def test_bad_uris_are_config_errors
    assert_raises(Heron::ConfigError) { Binder.new(["http://127.0.0.1:1"]).bind }
    assert_raises(Heron::ConfigError) { Binder.new(["tcp://127.0.0.1"]).bind }
  end

  def test_an_ssl_bind_is_a_tls_listener_with_an_https_address
    with_env("HERON_DEV_CERT_DIR" => File.join(@dir, "cert")) do
      listeners = bind("ssl://127.0.0.1:0", environment: "development")
      assert_equal "https", Binder.scheme(listeners.first)
      assert_match(%r{\Ahttps://127\.0\.0\.1:\d+\z}, @binder.addresses.first)
    end
  end
end
