# frozen_string_literal: true

require "uri"
require_relative "usage_error"
require_relative "version"
require_relative "h2_headers"

module Heron
  module Attack
    # One request to send: method, URL (http:// or https://), headers and body, with its HTTP/1.1
    # bytes built once.
    class Target
      METHODS = %w[GET HEAD POST PUT PATCH DELETE OPTIONS TRACE].freeze
      SCHEMES = [URI::HTTP, URI::HTTPS].freeze

      # @return [String] the request method, upper case.
      attr_reader :method
      # @return [URI::HTTP] the parsed URL (a URI::HTTPS for https://).
      attr_reader :uri

      # @param method [String] an HTTP method (case-insensitive).
      # @param url [String] an absolute http:// or https:// URL.
      # @param headers [Array<String>] "Name: value" lines added to every request.
      # @param body [String, nil] the request body.
      # @param keepalive [Boolean] false sends "Connection: close".
      # @param weight [Integer] this target's share when targets are picked (see {TargetPicker}).
      # @raise [UsageError] for an unknown method or a URL that is not http(s)://host[:port]/...
      def initialize(method, url, headers: [], body: nil, keepalive: true, weight: 1)
        @method = method.to_s.upcase
        @weight = weight
        raise UsageError, "unknown method #{method.inspect}" unless METHODS.include?(@method)
        @uri = self.class.parse_url(url)
        @authority = "#{@uri.host}:#{@uri.port}".freeze
        @origin = "#{@uri.scheme}://#{@authority}".freeze
        @body_bytes = body.to_s.bytesize
        @body = body&.b&.freeze
        @headers = headers
        @bytes = build(headers, body, keepalive).freeze
      end

      # @return [Integer] the request body's size in bytes. @return [Integer] the pick weight.
      attr_reader :body_bytes, :weight
      # @return [String, nil] the request body (binary).
      attr_reader :body
      # @return [Array<String>] the "Name: value" header lines given.
      attr_reader :headers

      # @param url [String]
      # @return [URI::HTTP, URI::HTTPS]
      # @raise [UsageError] unless url is an absolute http or https URL with a host.
      def self.parse_url(url)
        uri = URI.parse(url.to_s)
        raise UsageError, "not an http:// or https:// URL: #{url}" unless SCHEMES.include?(uri.class) && uri.host
        uri
      rescue URI::InvalidURIError
        raise UsageError, "not a valid URL: #{url}"
      end

      # @return [String] the frozen request bytes (head and body).
      def to_bytes
        @bytes
      end

      # The request as an HTTP/2 header list, built once: the pseudo-headers, then the headers in
      # lower case (a Host header becomes :authority; the HTTP/1 connection headers HTTP/2
      # forbids are left out).
      # @return [Array<Array(String, String)>] frozen.
      def h2_headers
        @h2_headers ||= H2Headers.new(self, @headers).to_a.freeze
      end

      # @return [String] the Host header's value: the host, with the port unless it is the
      #   scheme's default.
      def authority_header
        @uri.port == @uri.default_port ? @uri.host : @authority
      end

      # @return [Boolean] whether a response to this request has no body (HEAD).
      def head?
        @method == "HEAD"
      end

      # @return [String] "host:port".
      attr_reader :authority
      # @return [String] "scheme://host:port", the connection pool key (an http and an https
      #   target on one host:port never share a connection).
      attr_reader :origin

      # @return [Boolean] whether this target is sent over TLS (an https:// URL).
      def tls?
        @uri.scheme == "https"
      end

      private

      def build(headers, body, keepalive)
        names = headers.map { |h| h.split(":", 2).first.strip.downcase }
        head = +"#{@method} #{@uri.request_uri} HTTP/1.1\r\n"
        head << "Host: #{authority_header}\r\n" unless names.include?("host")
        head << "User-Agent: heron-attack/#{Heron::Attack::VERSION}\r\n" unless names.include?("user-agent")
        headers.each { |h| head << h.strip << "\r\n" }
        head << "Content-Length: #{body.bytesize}\r\n" if body
        head << "Connection: close\r\n" unless keepalive
        head << "\r\n"
        head.b << body.to_s.b
      end
    end
  end
end
