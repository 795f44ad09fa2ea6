# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "etc"
require "net/http"
require_relative "../../support/nginx_helper"

# unix:// binds: the socket file's mode (?mode=, ?umask=, default 0660) and a real proxy in the
# socket's group connecting through it.
class UnixOptionsTest < Minitest::Test
  include NginxHelper

  APP = ->(_env) { [200, { "content-type" => "text/plain" }, ["through the socket\n"]] }

  def setup
    @dir = Dir.mktmpdir("heron-unix")
    File.chmod(0o755, @dir)
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def socket_mode(query)
    path = File.join(@dir, "s.sock")
    binder = Heron::Binder.new(["unix://#{path}#{query}"])
    binder.bind
    File.stat(path).mode & 0o777
  ensure
    binder&.close
  end

  def test_default_mode_lets_the_group_connect
    assert_equal 0o660, socket_mode("")
  end

  def test_mode_and_umask_options
    assert_equal 0o600, socket_mode("?mode=0600")
    assert_equal 0o666, socket_mode("?mode=666")
    assert_equal 0o700, socket_mode("?umask=0077")
    assert_equal 0o640, socket_mode("?umask=0022&mode=0640")
  end

  def test_bad_options_are_config_errors
    { "?mode=0999" => /mode must be three octal digits/, "?mode=rw" => /mode must be/,
      "?umask=7" => /umask must be/, "?owner=nginx" => /unknown option "owner"/ }.each do |query, message|
      error = assert_raises(Heron::ConfigError) { socket_mode(query) }
      assert_match(message, error.message)
    end
    refute File.exist?(File.join(@dir, "s.sock")), "nothing is created for a bad option"
  end

  # nginx's worker runs as www-data, in the socket file's group (a setgid run directory owned by
  # www-data's group, as /run/app would be): with the default mode it can connect.
  def test_nginx_worker_in_the_group_proxies_through_the_socket
    group = Etc.getgrnam("www-data").gid
    File.chown(nil, group, @dir)
    File.chmod(0o2750, @dir)
    socket = File.join(@dir, "app.sock")
    with_server(APP, binds: ["unix://#{socket}"]) do
      assert_equal group, File.stat(socket).gid
      with_nginx(@dir, "location / { proxy_pass http://unix:#{socket}:; }") do |port|
        response = Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/"))
        assert_equal ["200", "through the socket\n"], [response.code, response.body], File.read(File.join(@dir, "error.log"))
      end
    end
  end
end
