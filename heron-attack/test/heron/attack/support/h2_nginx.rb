# frozen_string_literal: true

require "socket"
require "fileutils"
require "support/tls_certificates"
require "support/nginx_helper"

# A real nginx serving HTTP/2 for the attack tests: h2c with prior knowledge on one port, h2 over
# TLS (ALPN) on another, each answering `return 200 "hello"`. Unlike {NginxHelper#with_nginx}
# it runs as whoever runs the tests (nginx keeps the master's user when it is not root).
module H2Nginx
  include NginxHelper

  # @param dir [String] for the config, certificates, pid and logs (access.log).
  # @param http [String] more directives for the http block, e.g. "keepalive_requests 5;".
  # @yieldparam h2c_port [Integer] @yieldparam tls_port [Integer] @yieldparam ca [String] the CA file.
  def with_h2_nginx(dir, http: "")
    flunk "nginx is not installed (bin/setup installs it)" unless File.executable?(NGINX)
    paths = TLSCertificates.make(FileUtils.mkdir_p(File.join(dir, "certs")).first, "localhost")
    ports = Array.new(2) { TCPServer.open("127.0.0.1", 0) { |server| server.addr[1] } }
    run_nginx(dir, h2_nginx_conf(dir, ports, paths["localhost"], http), ports) { yield(*ports, paths["ca"]) }
  end

  private

  # nginx 1.25.1 replaced `listen ... http2` with the `http2 on` directive.
  def h2_listen(port, ssl)
    version = `#{NGINX} -v 2>&1`[%r{nginx/(\d+\.\d+\.\d+)}, 1]
    modern = Gem::Version.new(version) >= Gem::Version.new("1.25.1")
    "listen 127.0.0.1:#{port}#{' ssl' if ssl}#{' http2' unless modern}; #{'http2 on;' if modern}"
  end

  def h2_nginx_conf(dir, ports, (cert, key), http)
    <<~CONF
      worker_processes 1;
      daemon off;
      pid #{dir}/nginx.pid;
      error_log #{dir}/error.log;
      events { worker_connections 256; }
      http {
        access_log #{dir}/access.log;
        #{http}
        client_body_temp_path #{dir}/body; proxy_temp_path #{dir}/proxy;
        fastcgi_temp_path #{dir}/fcgi; uwsgi_temp_path #{dir}/uwsgi; scgi_temp_path #{dir}/scgi;
        server { #{h2_listen(ports[0], false)} location / { return 200 "hello"; } }
        server { #{h2_listen(ports[1], true)} ssl_certificate #{cert}; ssl_certificate_key #{key};
                 location / { return 200 "hello"; } }
      }
    CONF
  end
end
