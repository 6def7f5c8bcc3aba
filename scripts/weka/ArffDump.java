import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

import weka.core.Attribute;
import weka.core.Instance;
import weka.core.Instances;
import weka.core.SparseInstance;
import weka.core.converters.ArffLoader;

/**
 * Loads ARFF files with WEKA's own weka.core.converters.ArffLoader (plain or .gz) and dumps what WEKA read.
 *
 * Usage: java -Dfile.encoding=UTF-8 -Duser.timezone=UTC -cp weka.jar:DIR ArffDump JOBS
 * JOBS has one tab-separated line per file: in.arff[.gz] TAB out.txt. Each out.txt is UTF-8 text:
 *   OK                                      (or "ERROR <message>" and nothing else)
 *   R <relation>
 *   A <name> TAB <numeric|nominal|string|date|relational> [TAB <nominal value>...] [TAB <date format>]
 *   N <number of instances>
 *   then one line per instance: D|S TAB weight TAB tokens
 * D (dense Instance): one token per attribute. S (SparseInstance): "index:token" per stored entry
 * (attributes not stored are 0). A token is "?" (missing) or "=" followed by the value: numeric and
 * date values as Double.toString, nominal and string values as their text. Every text is escaped:
 * backslash, tab, newline and carriage return become \\, \t, \n, \r.
 */
public class ArffDump {
    static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\': b.append("\\\\"); break;
                case '\t': b.append("\\t"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                default: b.append(c);
            }
        }
        return b.toString();
    }

    static String type(Attribute a) {
        switch (a.type()) {
            case Attribute.NUMERIC: return "numeric";
            case Attribute.NOMINAL: return "nominal";
            case Attribute.STRING: return "string";
            case Attribute.DATE: return "date";
            case Attribute.RELATIONAL: return "relational";
            default: return "type" + a.type();
        }
    }

    static String token(Instance inst, Attribute a, double v) {
        if (Instance.isMissingValue(v)) return "?";
        if (a.isNominal() || a.isString()) return "=" + esc(a.value((int) v));
        return "=" + Double.toString(v);
    }

    static void dump(Instances data, PrintWriter out) {
        out.println("OK");
        out.println("R " + esc(data.relationName()));
        for (int j = 0; j < data.numAttributes(); j++) {
            Attribute a = data.attribute(j);
            StringBuilder b = new StringBuilder("A ").append(esc(a.name())).append('\t').append(type(a));
            if (a.isNominal()) {
                for (int v = 0; v < a.numValues(); v++) b.append('\t').append(esc(a.value(v)));
            }
            if (a.isDate()) b.append('\t').append(esc(a.getDateFormat()));
            out.println(b);
        }
        out.println("N " + data.numInstances());
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < data.numInstances(); i++) {
            Instance inst = data.instance(i);
            b.setLength(0);
            boolean sparse = inst instanceof SparseInstance;
            b.append(sparse ? 'S' : 'D').append('\t').append(Double.toString(inst.weight()));
            if (sparse) {
                for (int k = 0; k < inst.numValues(); k++) {
                    int j = inst.index(k);
                    b.append('\t').append(j).append(':').append(token(inst, data.attribute(j), inst.valueSparse(k)));
                }
            } else {
                for (int j = 0; j < data.numAttributes(); j++) {
                    b.append('\t').append(token(inst, data.attribute(j), inst.value(j)));
                }
            }
            out.println(b);
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader jobs = new BufferedReader(
            new InputStreamReader(new FileInputStream(args[0]), StandardCharsets.UTF_8));
        String line;
        int done = 0;
        while ((line = jobs.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t");
            PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(
                new FileOutputStream(f[1]), StandardCharsets.UTF_8)));
            try {
                ArffLoader loader = new ArffLoader();
                loader.setFile(new File(f[0]));
                Instances data = loader.getDataSet();
                dump(data, out);
            } catch (Throwable e) {
                out.println("ERROR " + esc(e.toString()));
            } finally {
                out.close();
            }
            done++;
        }
        jobs.close();
        System.err.println("ArffDump: " + done + " files done");
    }
}
