# frozen_string_literal: true

# `heron attack --http2` cross-checked against h2load on the same servers: a hello world on
# Heron and nginx `return 200 "hello"`, h2c with prior knowledge and h2 over TLS (nginx with
# keepalive_requests raised from 1,000: h2load does not reconnect after nginx's GOAWAY), at a few
# rates.
#
#   bundle exec ruby bench/attack_http2.rb [--rates 250,500,1000] [--duration 5] [--connections 2]
#                                          [--max-streams 100] [--targets heron,nginx,heron-tls,nginx-tls]
#
# The -tls targets serve h2 over TLS (a self-signed certificate: heron attack runs with
# --insecure, h2load does not verify), negotiated by ALPN.
#
# heron attack sends open loop (request i due at i / rate) over --connections connections with
# up to --max-streams streams each. h2load runs with the same connections and streams and
# `--rps rate / connections` per connection for the same duration; it reports time per request
# from the send (mean, max), which is heron attack's *uncorrected* latency. The table gives each
# tool's achieved rate and mean/max latency, and heron attack's corrected p50/p99 and lateness
# p99 beside them. Results: bench/results/attack_http2.md.

require "json"
require "open3"
require "optparse"
require "tmpdir"
require_relative "lib/server_process"
require_relative "lib/results_page"
require_relative "lib/attack_json"
require_relative "lib/self_signed"

# One run of the comparison; see the comment at the top.
class AttackHTTP2Bench
  ROOT = File.expand_path("..", __dir__)
  NGINX_CONF = <<~CONF
    worker_processes 1;
    daemon off;
    pid %<dir>s/nginx.pid;
    error_log %<dir>s/nginx-error.log;
    events { worker_connections 1024; }
    http {
      access_log off;
      keepalive_requests 1000000;
      server { listen 127.0.0.1:%<port>d %<tls>shttp2; %<certificate>s location / { return 200 "hello"; } }
    }
  CONF
  UNITS = { "us" => 1e-3, "ms" => 1.0, "s" => 1e3 }.freeze

  def initialize(argv)
    @rates = [250, 500, 1000]
    @duration = 5
    @connections = 2
    @max_streams = 100
    @targets = %w[heron nginx heron-tls nginx-tls]
    OptionParser.new do |o|
      o.on("--rates LIST") { |v| @rates = v.split(",").map { |rate| Integer(rate) } }
      o.on("--duration S", Integer) { |v| @duration = v }
      o.on("--connections N", Integer) { |v| @connections = v }
      o.on("--max-streams N", Integer) { |v| @max_streams = v }
      o.on("--targets LIST") { |v| @targets = v.split(",") }
    end.parse!(argv)
  end

  def run
    Bench::ResultsPage.capture("attack_http2.md")
    puts "#{@connections} connections x #{@max_streams} streams, #{@duration}s per run; latency in ms " \
         "(h2load's is from the send: compare with heron attack's uncorrected)"
    puts
    puts "| server | rate | attack achieved/s | h2load req/s | attack uncorr. mean | h2load mean | attack uncorr. max | " \
         "h2load max | attack corr. p50 | attack corr. p99 | attack lateness p99 | errors (attack / h2load) |"
    puts "|---|---|---|---|---|---|---|---|---|---|---|---|"
    Dir.mktmpdir("attack-http2") do |dir|
      @targets.each { |target| with_server(target, dir) { |url| @rates.each { |rate| row(target, url, rate, dir) } } }
    end
    puts
    puts "heron attack: `heron attack URL --http2 -r RATE -d #{@duration} -c #{@connections} --max-streams #{@max_streams}` " \
         "(--insecure for https://)"
    puts "h2load: `h2load -c #{@connections} -m #{@max_streams} --rps RATE/#{@connections} -D #{@duration} URL`"
  end

  private

  def with_server(target, dir)
    port = Bench::ServerProcess.free_port
    tls = target.end_with?("-tls") && Bench::SelfSigned.write(dir)
    argv = server_argv(target.delete_suffix("-tls"), dir, port, tls)
    server = Bench::ServerProcess.new(argv, port: port, log: File.join(dir, "#{target}.log"), chdir: dir).start
    yield tls ? server.url.sub("http:", "https:") : server.url
  ensure
    server&.stop
  end

  def server_argv(name, dir, port, (cert, key))
    if name == "heron"
      bind = cert ? "ssl://127.0.0.1:#{port}?cert=#{cert}&key=#{key}" : "tcp://127.0.0.1:#{port}"
      return [RbConfig.ruby, File.join(ROOT, "exe/heron"), "-e", "production", "-b", bind, File.join(ROOT, "bench/hello.ru")]
    end
    conf = File.join(dir, "nginx.conf")
    File.write(conf, format(NGINX_CONF, dir: dir, port: port, tls: cert ? "ssl " : "",
                                        certificate: cert ? "ssl_certificate #{cert}; ssl_certificate_key #{key};" : ""))
    ["/usr/sbin/nginx", "-c", conf, "-p", dir, "-e", File.join(dir, "nginx-error.log")]
  end

  def row(target, url, rate, dir)
    attack = attack(url, rate, dir)
    h2load = h2load(url, rate)
    latency = attack["latency_ms"]
    cells = [target, rate, attack["rate"]["achieved"], h2load[:rate], latency["uncorrected"]["mean"], h2load[:mean],
             latency["uncorrected"]["max"], h2load[:max], latency["corrected"]["p50"], latency["corrected"]["p99"],
             attack["lateness_ms"]["p99"], "#{attack['requests']['sent'] - attack['requests']['ok']} / #{h2load[:errors]}"]
    puts "| #{cells.map { |cell| cell.is_a?(Float) ? format('%.2f', cell) : cell }.join(' | ')} |"
  end

  def attack(url, rate, dir)
    Bench::AttackJSON.run([url, "--http2", "-r", rate.to_s, "-d", @duration.to_s, "-c", @connections.to_s,
                           "--max-streams", @max_streams.to_s, *("--insecure" if url.start_with?("https:"))], dir)
  end

  def h2load(url, rate)
    argv = ["h2load", "-c", @connections.to_s, "-m", @max_streams.to_s, "--rps", (rate.to_f / @connections).to_s, "-D", @duration.to_s, url]
    output, status = Open3.capture2e(*argv)
    abort "h2load failed:\n#{output}" unless status.success?
    parse_h2load(output)
  end

  def parse_h2load(output)
    rate = output[%r{finished in [\d.]+m?s, ([\d.]+) req/s}, 1].to_f
    done = output[/requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded/]
    errors = done ? Regexp.last_match(1).to_i - Regexp.last_match(2).to_i : "?"
    times = output[/time for request:\s+(\S+)\s+(\S+)\s+(\S+)/] && Regexp.last_match.captures.map { |t| ms(t) }
    { rate: rate, mean: times&.[](2), max: times&.[](1), errors: errors }
  end

  def ms(text)
    value, unit = text.match(/\A([\d.]+)(us|ms|s)\z/).captures
    value.to_f * UNITS.fetch(unit)
  end
end

AttackHTTP2Bench.new(ARGV).run if $PROGRAM_NAME == __FILE__
