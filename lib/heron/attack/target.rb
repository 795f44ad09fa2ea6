# frozen_string_literal: true

require "uri"
require_relative "usage_error"

module Heron
  module Attack
    # One request to send: method, URL, headers and body, with its HTTP/1.1 bytes built once.
    class Target
      METHODS = %w[GET HEAD POST PUT PATCH DELETE OPTIONS TRACE].freeze

      # @return [String] the request method, upper case.
      attr_reader :method
      # @return [URI::HTTP] the parsed URL.
      attr_reader :uri

      # @param method [String] an HTTP method (case-insensitive).
      # @param url [String] an absolute http:// URL.
      # @param headers [Array<String>] "Name: value" lines added to every request.
      # @param body [String, nil] the request body.
      # @param keepalive [Boolean] false sends "Connection: close".
      # @raise [UsageError] for an unknown method or a URL that is not http://host[:port]/...
      def initialize(method, url, headers: [], body: nil, keepalive: true)
        @method = method.to_s.upcase
        raise UsageError, "unknown method #{method.inspect}" unless METHODS.include?(@method)
        @uri = self.class.parse_url(url)
        @authority = "#{@uri.host}:#{@uri.port}".freeze
        @body_bytes = body.to_s.bytesize
        @bytes = build(headers, body, keepalive).freeze
      end

      # @return [Integer] the request body's size in bytes.
      attr_reader :body_bytes

      # @param url [String]
      # @return [URI::HTTP]
      # @raise [UsageError] unless url is an absolute http URL with a host.
      def self.parse_url(url)
        uri = URI.parse(url.to_s)
        raise UsageError, "not an http:// URL: #{url}" unless uri.instance_of?(URI::HTTP) && uri.host
        uri
      rescue URI::InvalidURIError
        raise UsageError, "not a valid URL: #{url}"
      end

      # Reads a targets file: one "METHOD URL" per line; blank lines and # comments skipped.
      # @param path [String]
      # @param options [Hash] headers:, body:, keepalive: as for {#initialize}.
      # @return [Array<Target>]
      # @raise [UsageError] when the file is missing, empty or has a bad line.
      def self.load_file(path, **options)
        lines = File.readlines(path, chomp: true).map(&:strip).reject { |l| l.empty? || l.start_with?("#") }
        raise UsageError, "targets file #{path} has no targets" if lines.empty?
        lines.map { |line| from_line(line, path, **options) }
      rescue SystemCallError => e
        raise UsageError, "cannot read targets file: #{e.message}"
      end

      # @param line [String] "METHOD URL".
      # @param path [String] the file, for the error message.
      # @return [Target]
      def self.from_line(line, path, **options)
        method, url, extra = line.split(/\s+/)
        raise UsageError, "#{path}: expected 'METHOD URL', got #{line.inspect}" if url.nil? || extra
        new(method, url, **options)
      end

      # @return [String] the frozen request bytes (head and body).
      def to_bytes
        @bytes
      end

      # @return [Boolean] whether a response to this request has no body (HEAD).
      def head?
        @method == "HEAD"
      end

      # @return [String] "host:port", the connection pool key.
      attr_reader :authority

      private

      def build(headers, body, keepalive)
        names = headers.map { |h| h.split(":", 2).first.strip.downcase }
        head = +"#{@method} #{@uri.request_uri} HTTP/1.1\r\n"
        head << "Host: #{authority_header}\r\n" unless names.include?("host")
        head << "User-Agent: heron-attack/#{Heron::VERSION}\r\n" unless names.include?("user-agent")
        headers.each { |h| head << h.strip << "\r\n" }
        head << "Content-Length: #{body.bytesize}\r\n" if body
        head << "Connection: close\r\n" unless keepalive
        head << "\r\n"
        head.b << body.to_s.b
      end

      def authority_header
        @uri.port == 80 ? @uri.host : @authority
      end
    end
  end
end
