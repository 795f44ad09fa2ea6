# frozen_string_literal: true

require "protocol/http2/server"
require "protocol/http2/framer"
require "protocol/http2/stream"
require_relative "../clock"

module Heron
  module HTTP2
    # Counts frames a client can send cheaply and the server must answer (resets, PINGs,
    # SETTINGS, refused streams) within a sliding window; past the limit the connection is a
    # flood and ends with ENHANCE_YOUR_CALM.
    class FloodGuard
      include Clock

      # Frames of each kind allowed per WINDOW seconds.
      LIMITS = { reset: 200, ping: 100, settings: 100, refused: 200 }.freeze
      WINDOW = 10.0

      def initialize
        @counts = Hash.new(0)
        @since = now
      end

      # @param kind [Symbol] a key of LIMITS.
      # @raise [Protocol::HTTP2::ProtocolError] (ENHANCE_YOUR_CALM) past its limit.
      def count(kind)
        restart if now - @since > WINDOW
        @counts[kind] += 1
        return if @counts[kind] <= LIMITS.fetch(kind)
        raise Protocol::HTTP2::ProtocolError.new("#{kind} flood", Protocol::HTTP2::ENHANCE_YOUR_CALM)
      end

      private

      def restart
        @counts.clear
        @since = now
      end
    end
  end
end
