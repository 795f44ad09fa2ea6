# frozen_string_literal: true

require_relative "../config_error"

module Heron
  class Binder
    # The query of a `unix://` bind URI: `?mode=0660` (the socket file's permissions, set before
    # it accepts) and `?umask=0007` (the umask it is created under), as Puma spells them. With
    # neither, the mode is 0660: a proxy in the socket's group (nginx's worker in a setgid run
    # directory, say) can connect, and other users cannot. The old default, the process umask
    # (usually 0755), refused every user but the owner, since connecting needs write permission.
    class UnixOptions
      DEFAULT_MODE = 0o660
      OCTAL = /\A0?[0-7]{3}\z/

      # @return [Integer, nil] the mode to chmod the socket to.
      attr_reader :mode
      # @return [Integer, nil] the umask to create the socket under.
      attr_reader :umask

      # @param query [String, nil] the URI's query, e.g. "mode=0660".
      # @param uri [String] the whole URI, for error messages.
      # @raise [ConfigError] for an unknown option or a value that is not three octal digits.
      def initialize(query, uri)
        options = URI.decode_www_form(query.to_s).to_h
        unknown = options.keys - %w[mode umask]
        raise ConfigError, "bind #{uri.inspect}: unknown option #{unknown.first.inspect} (use mode= or umask=)" if unknown.any?
        @umask = octal(options["umask"], "umask", uri)
        @mode = octal(options["mode"], "mode", uri) || (@umask ? nil : DEFAULT_MODE)
      end

      # Creates the socket under the umask (if any), then sets the mode (if any).
      # @param path [String]
      # @yieldreturn [UNIXServer] the socket, created by the block.
      # @return [UNIXServer]
      def create(path)
        server = @umask ? with_umask { yield } : yield
        File.chmod(@mode, path) if @mode
        server
      end

      private

      def octal(value, name, uri)
        return nil if value.nil?
        raise ConfigError, "bind #{uri.inspect}: #{name} must be three octal digits like 0660 (got #{value.inspect})" unless OCTAL.match?(value)
        value.to_i(8)
      end

      # File.umask is process-wide; binding happens at start-up, before any thread or fiber runs.
      def with_umask
        previous = File.umask(@umask)
        yield
      ensure
        File.umask(previous) if previous
      end
    end
  end
end
