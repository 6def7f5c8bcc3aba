import weka.core.*;
import weka.core.converters.ArffLoader;
import java.io.*;
/**
 * WEKA's reading of one attribute line per stdin line: the line goes between "@relation r" and "@data"
 * and ArffLoader.ArffReader reads the structure. Prints "OK" and each attribute's name|type|values, or
 * "ERR" and the message.
 */
public class NominalListDump {
  public static void main(String[] a) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    String line;
    while ((line = in.readLine()) != null) {
      String text = "@relation r\n" + line + "\n@data\n";
      try {
        ArffLoader.ArffReader r = new ArffLoader.ArffReader(new StringReader(text));
        Instances d = r.getStructure();
        StringBuilder sb = new StringBuilder();
        for (int j = 0; j < d.numAttributes(); j++) {
          Attribute at = d.attribute(j);
          sb.append(at.name()).append("|").append(at.type());
          if (at.isNominal()) for (int k = 0; k < at.numValues(); k++) sb.append("|").append(at.value(k));
          sb.append("\t");
        }
        System.out.println("OK\t" + sb.toString().replace("\n", "\\n"));
      } catch (Exception e) {
        System.out.println("ERR\t" + String.valueOf(e.getMessage()).replace("\n", " ").replace("\t", " "));
      }
    }
  }
}
