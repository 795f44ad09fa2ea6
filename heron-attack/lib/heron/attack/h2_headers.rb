# frozen_string_literal: true

require_relative "version"

module Heron
  module Attack
    # A {Target}'s request as an HTTP/2 header list (RFC 9113 8.3): :method, :scheme, :authority
    # and :path, then the headers given with -H in lower case. A Host header sets :authority;
    # Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding and Upgrade, which HTTP/2
    # forbids, are left out.
    class H2Headers
      FORBIDDEN = %w[connection keep-alive proxy-connection transfer-encoding upgrade host].freeze

      # @param target [Target] @param headers [Array<String>] "Name: value" lines.
      def initialize(target, headers)
        @target = target
        @headers = headers.map { |line| line.split(":", 2).then { |name, value| [name.strip.downcase, value.strip] } }
      end

      # @return [Array<Array(String, String)>]
      def to_a
        names = @headers.map(&:first)
        list = pseudo_headers
        list << ["user-agent", "heron-attack/#{VERSION}"] unless names.include?("user-agent")
        list.concat(@headers.reject { |name, _| FORBIDDEN.include?(name) })
        list << ["content-length", @target.body_bytes.to_s] if @target.body
        list
      end

      private

      def pseudo_headers
        uri = @target.uri
        host = @headers.find { |name, _| name == "host" }&.last
        [[":method", @target.method], [":scheme", uri.scheme], [":authority", host || @target.authority_header],
         [":path", uri.request_uri]]
      end
    end
  end
end
