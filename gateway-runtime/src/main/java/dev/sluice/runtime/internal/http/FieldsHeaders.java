package dev.sluice.runtime.internal.http;

import dev.sluice.api.exchange.Headers;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;

import java.util.List;
import java.util.function.BiConsumer;

/** {@link Headers} as a view over Jetty's request fields: no copy. */
record FieldsHeaders(HttpFields fields) implements Headers
{
    @Override
    public String get(String name)
    {
        return fields.get(name);
    }

    @Override
    public List<String> getAll(String name)
    {
        return fields.getValuesList(name);
    }

    @Override
    public void forEach(BiConsumer<String, String> action)
    {
        for (HttpField f : fields)
            action.accept(f.getName(), f.getValue());
    }
}
