# frozen_string_literal: true

module Heron
  module Testing
    # What the client received, and what the app saw.
    class Response
      # @return [Integer] the final status.
      attr_reader :status
      # @return [Hash{String => String}] final headers, lower-case names; repeats joined by "\n".
      attr_reader :headers
      # @return [String] the decoded body.
      attr_reader :body
      # @return [Hash, nil] the env the app was called with (as the app left it).
      attr_reader :env
      # @return [Array<Integer>] interim (1xx) statuses received before the final one.
      attr_reader :interim
      # @return [String] every byte the server sent.
      attr_reader :raw
      # @return [String] what the server logged (access line, errors).
      attr_reader :log

      # @param exchange [Exchange]
      # @param env [Hash, nil]
      # @param callbacks [Server::CallbackRunner]
      # @param log [StringIO]
      def initialize(exchange, env, callbacks, log)
        @exchange = exchange
        @env = env
        @callbacks = callbacks
        @log = log.string
        @raw = exchange.raw
        @interim = []
        parse(@raw.dup)
      end

      # @return [Boolean] whether `100 Continue` was written.
      def continued? = @interim.include?(100)

      # @return [Float, nil] seconds from the request head to `100 Continue`.
      def continue_after = @exchange.continue_after

      # @return [Boolean] whether the client sent the body.
      def body_sent? = @exchange.body_sent

      # @return [Array<#call>] after-reply and response-finished callables not yet run.
      def pending_callbacks
        return [] unless @callbacks.backlog.positive? && @env
        Array(@env["rack.response_finished"]) + Array(@env["rack.after_reply"])
      end

      # Runs held callbacks (see `run_callbacks: false`) and waits for them.
      # @return [Response] self
      def run_callbacks!
        Sync { |task| @callbacks.release(task) }
        self
      end

      private

      def parse(data)
        loop do
          head, data = data.split("\r\n\r\n", 2)
          return if head.nil?
          status = head[/\AHTTP\/1\.\d (\d{3})/, 1].to_i
          next @interim << status if status.between?(100, 199) && status != 101
          return finish(status, head, data.to_s)
        end
      end

      def finish(status, head, rest)
        @status = status
        @headers = head.split("\r\n").drop(1).each_with_object({}) do |line, all|
          name, value = line.split(": ", 2)
          all[name.downcase] = all.key?(name.downcase) ? "#{all[name.downcase]}\n#{value}" : value
        end
        @body = @headers["transfer-encoding"] == "chunked" ? dechunk(rest) : rest
      end

      def dechunk(data)
        body = +""
        until (size = data.slice!(/\A\h+[^\r]*\r\n/)).nil? || (length = size.to_i(16)).zero?
          body << data.slice!(0, length)
          data.slice!(0, 2)
        end
        body
      end
    end
  end
end
