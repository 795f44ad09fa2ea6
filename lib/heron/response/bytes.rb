# frozen_string_literal: true

module Heron
  module Response
    # Appends app strings of any encoding to a binary buffer without encoding errors.
    module Bytes
      # @param buffer [String] a binary buffer.
      # @param part [String] any string.
      # @return [String] the buffer.
      def self.append(buffer, part)
        buffer << (part.ascii_only? || part.encoding == Encoding::BINARY ? part : part.b)
        buffer.force_encoding(Encoding::BINARY)
      end
    end
  end
end
