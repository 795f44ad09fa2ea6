# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "etc"
require "net/http"

# unix:// binds: the socket file's mode (?mode=, ?umask=, default 0660) and a real proxy in the
# socket's group connecting through it.
class UnixOptionsTest < Minitest::Test
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
    skip "needs root to run nginx's worker as www-data" unless Process.uid.zero?
    nginx = ENV.fetch("NGINX", "/usr/sbin/nginx")
    flunk "nginx is not installed (bin/setup installs it)" unless File.executable?(nginx)
    group = Etc.getgrnam("www-data").gid
    File.chown(nil, group, @dir)
    File.chmod(0o2750, @dir)
    socket = File.join(@dir, "app.sock")
    with_server(APP, binds: ["unix://#{socket}"]) do
      assert_equal group, File.stat(socket).gid
      with_nginx(nginx, socket) do |port|
        response = Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/"))
        assert_equal ["200", "through the socket\n"], [response.code, response.body], File.read(File.join(@dir, "error.log"))
      end
    end
  end

  private

  def listening?(port)
    TCPSocket.new("127.0.0.1", port).close
    true
  rescue SystemCallError
    false
  end

  def with_nginx(nginx, socket)
    port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
    conf = File.join(@dir, "nginx.conf")
    File.write(conf, <<~CONF)
      user www-data www-data;
      worker_processes 1;
      daemon off;
      pid #{@dir}/nginx.pid;
      error_log #{@dir}/error.log;
      events { worker_connections 64; }
      http {
        access_log off;
        client_body_temp_path #{@dir}/body; proxy_temp_path #{@dir}/proxy;
        fastcgi_temp_path #{@dir}/fcgi; uwsgi_temp_path #{@dir}/uwsgi; scgi_temp_path #{@dir}/scgi;
        server { listen 127.0.0.1:#{port}; location / { proxy_pass http://unix:#{socket}:; } }
      }
    CONF
    pid = Process.spawn(nginx, "-c", conf, "-p", @dir, out: File::NULL, err: File::NULL)
    Timeout.timeout(10) { sleep 0.05 until listening?(port) }
    yield port
  ensure
    if pid
      Process.kill(:QUIT, pid)
      Process.wait(pid)
    end
  end
end
