# frozen_string_literal: true

require "test_helper"
require "net/http"

# A `localhost` bind listens on each loopback address (127.0.0.1, and ::1 where the machine has
# it), so clients that resolve localhost to either family reach the server; a fixed address or
# port 0 is kept as it is.
class HeronBinderLocalhostTest < Minitest::Test
  include ServerHelper

  def test_a_localhost_bind_answers_on_every_loopback_address
    addresses = Socket.ip_address_list.select { |address| address.ipv4_loopback? || address.ipv6_loopback? }
                      .sort_by { |address| address.ipv4? ? 0 : 1 }.map(&:ip_address).uniq
    assert_includes addresses, "127.0.0.1"
    port = free_port
    with_server(->(env) { [200, {}, ["via #{env['SERVER_NAME']}"]] }, binds: ["tcp://localhost:#{port}"]) do |_, server|
      assert_equal addresses.map { |address| address.include?(":") ? "[#{address}]" : address }.map { |host| "http://#{host}:#{port}" },
                   server.addresses
      addresses.each do |address|
        socket = TCPSocket.new(address, port)
        socket.write("GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        assert_match(/via localhost\z/, socket.read, address)
        socket.close
      end
    end
  end

  # After SIGUSR2 the new process takes over both listeners (the bind's key is each address),
  # and the old one exits.
  def test_a_hot_restart_hands_over_both_listeners
    skip "no ::1 on this machine" unless Socket.ip_address_list.any?(&:ipv6_loopback?)
    port = free_port
    old, _, log = spawn_heron(%(run ->(env) { [200, {}, [Process.pid.to_s]] }\n), "-q", "--no-metrics", "-b", "tcp://localhost:#{port}")
    assert_equal [old.to_s] * 2, %w[127.0.0.1 ::1].map { |address| pid_answering(address, port) }
    Process.kill("USR2", old)
    assert wait_exit(old, timeout: 30)&.success?, File.read(log)
    fresh = %w[127.0.0.1 ::1].map { |address| pid_answering(address, port) }
    assert_equal 1, fresh.uniq.size, File.read(log)
    refute_equal old.to_s, fresh.first
  end

  def test_other_binds_are_kept
    localhost = Heron::Binder::Localhost
    assert_equal ["tcp://127.0.0.1:3000"], localhost.expand("tcp://127.0.0.1:3000", ["127.0.0.1", "::1"])
    assert_equal ["tcp://localhost:0"], localhost.expand("tcp://localhost:0", ["127.0.0.1", "::1"])
    assert_equal ["unix:///tmp/x.sock"], localhost.expand("unix:///tmp/x.sock", ["127.0.0.1"])
    assert_equal ["tcp://127.0.0.1:3000?proxy_protocol=v2", "tcp://[::1]:3000?proxy_protocol=v2"],
                 localhost.expand("tcp://LOCALHOST:3000?proxy_protocol=v2", ["127.0.0.1", "::1"])
  end

  private

  def pid_answering(address, port)
    Net::HTTP.start(address, port, open_timeout: 5, read_timeout: 10) { |http| http.get("/").body }
  end
end
