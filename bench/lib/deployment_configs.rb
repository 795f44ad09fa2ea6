# frozen_string_literal: true

# The configs docs/deployment.md shows, read from the doc itself: each is the fenced block right
# after a `<!-- deployment-config: NAME -->` line. bench/scale_out.rb runs them and
# test/docs/deployment_test.rb checks them (`nginx -t`, `haproxy -c`, Heron's config loader), so
# what a user copies is what was run.
module DeploymentConfigs
  DOC = File.expand_path("../../docs/deployment.md", __dir__)
  MARKER = /^<!-- deployment-config: (?<name>[\w.-]+) -->\n```[\w-]*\n(?<text>.*?)^```$/m

  module_function

  # @param doc [String] the markdown.
  # @return [Hash{String => String}] every marked block by name.
  def all(doc = File.read(DOC))
    doc.to_enum(:scan, MARKER).to_h { [Regexp.last_match[:name], Regexp.last_match[:text]] }
  end

  # @param name [String]
  # @return [String] the block's text.
  def fetch(name)
    all.fetch(name) { raise KeyError, "docs/deployment.md has no block marked deployment-config: #{name}" }
  end

  # @param dir [String] where nginx keeps its pid, logs and temp files.
  # @return [String] a whole nginx.conf: the doc's http-level block (`nginx.conf`) in a main
  #   context, with an access log that records each request's upstream attempts.
  def nginx_conf(dir)
    <<~CONF
      user www-data www-data;
      worker_processes 1;
      daemon off;
      pid #{dir}/nginx.pid;
      error_log #{dir}/nginx-error.log;
      events { worker_connections 4096; }
      http {
        log_format attempts '$msec $status "$upstream_addr" "$upstream_status"';
        access_log #{dir}/nginx-access.log attempts;
        client_body_temp_path #{dir}/body; proxy_temp_path #{dir}/proxy;
        fastcgi_temp_path #{dir}/fcgi; uwsgi_temp_path #{dir}/uwsgi; scgi_temp_path #{dir}/scgi;
      #{fetch('nginx.conf').gsub(/^/, '  ')}
      }
    CONF
  end
end
