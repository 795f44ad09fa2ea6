# frozen_string_literal: true

require "etc"
require "socket"

# Runs a real nginx (its worker as www-data) in front of a Heron under test.
module NginxHelper
  NGINX = ENV.fetch("NGINX", "/usr/sbin/nginx")

  # Starts nginx with `locations` (nginx config text inside `server { }`) on a free loopback
  # port, in `dir` (temp paths, pid, error.log), and stops it after the block.
  # @yieldparam port [Integer]
  def with_nginx(dir, locations)
    skip "needs root to run nginx's worker as www-data" unless Process.uid.zero?
    flunk "nginx is not installed (bin/setup installs it)" unless File.executable?(NGINX)
    port = TCPServer.open("127.0.0.1", 0) { |server| server.addr[1] }
    run_nginx(dir, nginx_conf(dir, port, locations), [port]) { yield port }
  end

  # Runs nginx with the config text `conf` in `dir` until the block returns, once every port
  # answers.
  # @param ports [Array<Integer>] the ports the config listens on.
  def run_nginx(dir, conf, ports)
    path = File.join(dir, "nginx.conf")
    File.write(path, conf)
    pid = Process.spawn(NGINX, "-c", path, "-p", dir, "-e", File.join(dir, "error.log"), out: File::NULL, err: File::NULL)
    Timeout.timeout(ProcessHelper::PATIENCE) { sleep 0.05 until ports.all? { |port| nginx_listening?(port) } }
    yield
  ensure
    if pid
      Process.kill(:QUIT, pid)
      Process.wait(pid)
    end
  end

  private

  def nginx_conf(dir, port, locations)
    <<~CONF
      user www-data www-data;
      worker_processes 1;
      daemon off;
      pid #{dir}/nginx.pid;
      error_log #{dir}/error.log;
      events { worker_connections 256; }
      http {
        access_log off;
        client_body_temp_path #{dir}/body; proxy_temp_path #{dir}/proxy;
        fastcgi_temp_path #{dir}/fcgi; uwsgi_temp_path #{dir}/uwsgi; scgi_temp_path #{dir}/scgi;
        server { listen 127.0.0.1:#{port}; #{locations} }
      }
    CONF
  end

  def nginx_listening?(port)
    TCPSocket.new("127.0.0.1", port).close
    true
  rescue SystemCallError
    false
  end
end
