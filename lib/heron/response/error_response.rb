# frozen_string_literal: true

require "rack/utils"
require_relative "../timeout_error"

module Heron
  module Response
    # The short responses Heron sends itself: for malformed requests, limits and app errors.
    module ErrorResponse
      # Maps an exception raised while the app ran to a status: limits and client faults (a body
      # that breaks the chunked grammar surfaces while the app reads it) keep their own status,
      # anything else is the app's fault (500).
      # @param error [Exception]
      # @return [Integer]
      def self.status_for(error)
        case error
        when Request::Input::TooLarge, Request::Input::Incomplete, HTTPParser::Error then error.status
        when Heron::TimeoutError then 408
        else 500
        end
      end

      # @param status [Integer]
      # @return [Array] a Rack response with a one-line text body.
      def self.rack(status)
        body = "#{reason(status)}\n"
        [status, { "content-type" => "text/plain", "content-length" => body.bytesize.to_s }, [body]]
      end

      # @param status [Integer]
      # @param message [String] what was wrong, for the developer reading the body.
      # @return [String] a complete response that closes the connection.
      def self.raw(status, message)
        body = "#{reason(status)}: #{message}\n"
        "HTTP/1.1 #{status} #{reason(status)}\r\ncontent-type: text/plain\r\n" \
          "content-length: #{body.bytesize}\r\nconnection: close\r\n\r\n#{body}"
      end

      # @return [String] the reason phrase.
      def self.reason(status)
        Rack::Utils::HTTP_STATUS_CODES.fetch(status, "Error")
      end
    end
  end
end
