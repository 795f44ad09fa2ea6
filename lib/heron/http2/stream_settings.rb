# frozen_string_literal: true

module Heron
  module HTTP2
    # What every stream of one connection is given (Stream#initialize): the connection's
    # callback for a complete request head and the limits of its request, read from the
    # configuration once per connection rather than once per stream.
    class StreamSettings
      # @return [#call] called with the stream once its headers arrived.
      attr_reader :on_request
      # @return [Integer, nil] max_body_size.
      attr_reader :body_limit
      # @return [Numeric] body_timeout.
      attr_reader :body_timeout
      # @return [Integer] the most bytes a decoded header list may have (counted as RFC 9113
      #   §6.5.2 does); enforced whether or not the client acknowledged the setting.
      attr_reader :header_limit
      # @return [Server::BodyBudget, nil] bounds bodies read whole (see {Input}).
      attr_reader :body_budget
      # @return [Request::Input] the input of every request without a body: empty, frozen.
      attr_reader :empty_input

      # @param on_request [#call]
      # @param body_limit [Integer, nil]
      # @param body_timeout [Numeric]
      # @param header_limit [Integer]
      # @param body_budget [Server::BodyBudget, nil]
      # @param empty_input [Request::Input] frozen, of length 0 (HTTP/1.1's for a bodiless request).
      def initialize(on_request:, body_limit:, body_timeout:, header_limit:, empty_input:, body_budget: nil)
        @on_request = on_request
        @body_limit = body_limit
        @body_timeout = body_timeout
        @header_limit = header_limit
        @body_budget = body_budget
        @empty_input = empty_input
        freeze
      end
    end
  end
end
