# frozen_string_literal: true

require_relative "../usage_error"

module Heron
  module Attack
    class Options
      # A ws:// run's plan: --connections connections opened at --connect-rate, each sending
      # --rate messages a second for --duration (or -n messages).
      class WebSocket
        # @return [Float] connections opened per second (default 100).
        attr_reader :connect_rate
        # @return [Integer, nil] messages each connection sends (set by {#plan!}).
        # @return [Float, nil] messages per second on each connection (the --rate given).
        attr_reader :messages, :message_rate

        # Starts from 100 connections a second; the messages come from the load.
        def initialize
          @connect_rate = 100.0
        end

        # Defines --connect-rate.
        # @param parser [OptionParser]
        # @return [void]
        def define(parser)
          parser.on("--connect-rate R", Float, "ws://: WebSocket connections opened per second (default 100)") { |v| @connect_rate = v }
        end

        # @return [void]
        # @raise [UsageError] unless --connect-rate is positive.
        def check!
          raise UsageError, "--connect-rate must be positive" unless @connect_rate.positive?
        end

        # Takes the messages per connection from the load given, then makes the load the whole
        # run's: every connection's messages at the mean rate, openings included.
        # @param load [Load] checked, with its connections set.
        # @return [void]
        # @raise [UsageError] when no message would be sent.
        def plan!(load)
          @message_rate = load.rate
          @messages = load.requests || (load.rate * load.duration).floor
          raise UsageError, "the run would send no messages" unless @messages.positive?
          span = ((load.connections - 1) / @connect_rate) + (@messages / @message_rate)
          load.spread!(load.connections * @messages, span)
        end
      end
    end
  end
end
