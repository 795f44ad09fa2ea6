# frozen_string_literal: true

require "async"
require "socket"
require "stringio"

module Heron
  module Testing
    # Serves one request over a UNIX socket pair with a real {Server::ReactorThread} and {Connection}.
    class Client
      # @param app [#call]
      # @param run_callbacks [Boolean] false holds after-reply callbacks.
      # @param settings [Hash] Configuration settings.
      def initialize(app, run_callbacks: true, **settings)
        @app = app
        @hold = !run_callbacks
        @log = StringIO.new
        @config = Configuration.new(log_io: @log, error_io: @log, **settings)
      end

      # @return [Response]
      def request(method, path, headers: {}, body: nil, wait: nil)
        seen = nil
        spy = ->(env) { (seen = env) && @app.call(env) }
        reactor = Server::ReactorThread.new(Server.new(spy, @config, listeners: []), 1)
        Sync do |task|
          exchange = serve(task, reactor, Exchange.new(method, path, headers, body, wait))
          Response.new(exchange, seen, reactor.callbacks, @log)
        end
      end

      private

      def serve(task, reactor, exchange)
        reactor.attach(task, hold_callbacks: @hold)
        client, server = UNIXSocket.pair
        serving = task.async { reactor.serve(server) }
        exchange.run(task, client)
        serving.wait
        reactor.callbacks.drain(Float::INFINITY) unless @hold
        exchange
      ensure
        client&.close
      end
    end
  end
end
