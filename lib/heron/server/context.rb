# frozen_string_literal: true

require_relative "../http_parser"
require_relative "../response/http_date"
require_relative "../connection/buffered_socket"
require_relative "../request/gc_pacer"
require_relative "body_budget"
require_relative "parser_pool"
require_relative "../response/app_failure"
require_relative "../response/writer"
require_relative "../request/input"

module Heron
  class Server
    # What the connections of one reactor thread read and share: the app, the settings, the
    # logger, the metrics registry, the env template, the Date cache, the read buffer and the
    # parsers parked connections gave back. Frozen once built (the pool it holds is not); a
    # connection gets this and a listener (the reactor: `draining?`, `admit`, `finished`) instead
    # of the reactor itself.
    class Context
      # @return [#call] the Rack app.
      attr_reader :app
      # @return [Configuration]
      attr_reader :config
      # @return [Log::Logger]
      attr_reader :logger
      # @return [Object, nil] the metrics registry, when metrics are on.
      attr_reader :metrics
      # @return [Hash] env entries every request starts with.
      attr_reader :env_template
      # @return [Response::HTTPDate] the Date header cache.
      attr_reader :date
      # @return [String] the read buffer the thread's connections share (see BufferedSocket).
      attr_reader :scratch_buffer
      # @return [String] the buffer the thread's HTTP/1.1 responses build their heads in (see
      #   Response::Writer): written before the fiber can switch, or copied first (BufferedSocket#write).
      attr_reader :head_buffer
      # @return [Request::GCPacer] counts the body bytes all the thread's requests hand to apps as
      #   new Strings: the garbage of concurrent uploads is one heap's, so one count paces it.
      attr_reader :gc_pacer
      # @return [Server::BodyBudget, nil] the bytes the thread's apps may hold in bodies read
      #   whole (`body_memory_limit`); nil when that is off.
      attr_reader :body_budget
      # @return [Response::AppFailure] what a request whose app raised is answered (and who is told).
      attr_reader :app_failure
      # @return [Request::Input] the `rack.input` of every bodiless request on the thread's
      #   connections, HTTP/1.1 and HTTP/2: frozen, of length 0, it holds neither a socket nor a
      #   parser and never changes. One for the thread, rather than one per connection, is one
      #   object (and its table of 13 instance variables) that each request finds in the CPU's
      #   cache instead of loading from memory at many connections (bench/results/per_core.md,
      #   "Fewer cold lines a request").
      attr_reader :empty_input
      # @return [Server::ParserPool] the thread's HTTP/1.1 parsers: a connection takes one for its
      #   first request and gives it back when it parks between requests.
      attr_reader :parsers

      # @param server [Server] supplies the app, config, logger, metrics and env template.
      def initialize(server)
        @app = server.app
        @config = server.config
        @logger = server.logger
        @metrics = server.metrics
        @env_template = server.env_template
        @date = Response::HTTPDate.new
        @scratch_buffer = Connection::BufferedSocket.scratch_buffer
        @head_buffer = Response::Writer.head_buffer
        @gc_pacer = Request::GCPacer.new
        limit = @config.body_memory_limit
        @body_budget = limit && Server::BodyBudget.new(limit, @config.body_spool_threshold)
        @app_failure = Response::AppFailure.new(@logger, @config.lowlevel_error_handler)
        @parsers = Server::ParserPool.new(@config)
        @empty_input = Request::Input.new(nil, nil, 0, @config).freeze
        freeze
      end
    end
  end
end
